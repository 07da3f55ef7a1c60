// Command timeit runs a command N times and prints the median wall time and the peak
// resident set size of the runs, as `median_s=<s> max_rss_kb=<kb>`. The benchmark
// scripts under bench/ use it to measure perfbot and its peers in the same run, with
// nothing installed beyond Go.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"time"
)

func main() {
	n := flag.Int("n", 5, "number of runs")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: timeit [-n N] -- CMD [ARGS]")
		os.Exit(2)
	}
	var walls []float64
	var maxRSS int64
	for i := 0; i < *n; i++ {
		cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
		cmd.Stdout, cmd.Stderr = nil, os.Stderr
		start := time.Now()
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "timeit: %v\n", err)
			os.Exit(1)
		}
		walls = append(walls, time.Since(start).Seconds())
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss > maxRSS {
			maxRSS = ru.Maxrss // KiB on Linux
		}
	}
	slices.Sort(walls)
	fmt.Printf("median_s=%.4f max_rss_kb=%d\n", walls[len(walls)/2], maxRSS)
}
