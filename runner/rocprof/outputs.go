package rocprof

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/lablup/perfbot/internal/safetext"
)

// Outputs are the files rocprofv3 wrote for one process, by what they hold. A field is
// "" when the file is missing, which means zero records of that kind.
type Outputs struct {
	KernelTrace, KernelStats, AgentInfo string
	Other                               map[string]string // by suffix: "domain_stats", "memory_copy_trace", ...
}

// rocpdPrefix is the prefix `rocpd convert -f csv` (rocpd2csv) gives its files.
const rocpdPrefix = "out"

// FindOutputs finds rocprofv3's files in a trace dir: <dir>/<prefix>_*.csv (the prefix
// may have a folder part, "host1/4242"), or, when prefix is "" (the profiler's default
// <pid> or <host>/<pid> prefix), <dir>/<pid>_*.csv and <dir>/*/<pid>_*.csv. When that
// finds no kernel trace, a database-converted out_kernel_trace.csv in dir or one level
// below fills the gap.
//
// Several processes' outputs under an empty prefix are ambiguous unless exactly one of
// them has a kernel trace; that is an error naming them.
func FindOutputs(dir, prefix string) (Outputs, error) {
	// An -o with a folder part (rocprofv3 accepts "%hostname%/%pid%" style values)
	// puts the files in that folder.
	if sub := filepath.Dir(prefix); prefix != "" && sub != "." {
		dir, prefix = filepath.Join(dir, sub), filepath.Base(prefix)
	}
	top, err := os.ReadDir(dir)
	if err != nil {
		return Outputs{}, fmt.Errorf("listing trace dir: %w", err)
	}
	// groups maps "<folder>/<prefix>" to that process's files by suffix.
	groups := map[string]map[string]string{}
	rocpd := map[string]map[string]string{}
	scan := func(folder string, entries []os.DirEntry) {
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || !strings.HasSuffix(name, ".csv") {
				continue
			}
			base := strings.TrimSuffix(name, ".csv")
			target := groups
			var p, suffix string
			switch {
			case strings.HasPrefix(base, rocpdPrefix+"_"):
				target, p, suffix = rocpd, rocpdPrefix, base[len(rocpdPrefix)+1:]
			case prefix != "":
				// The prefix may itself hold '_' (a run name does): match it whole.
				if folder != "" || !strings.HasPrefix(base, prefix+"_") {
					continue
				}
				p, suffix = prefix, base[len(prefix)+1:]
			default:
				var ok bool
				p, suffix, ok = strings.Cut(base, "_")
				if !ok || !isDigits(p) {
					continue
				}
			}
			if suffix == "" {
				continue
			}
			key := filepath.Join(folder, p)
			if target[key] == nil {
				target[key] = map[string]string{}
			}
			target[key][suffix] = filepath.Join(dir, folder, name)
		}
	}
	scan("", top)
	for _, e := range top {
		if !e.IsDir() {
			continue
		}
		sub, err := os.ReadDir(filepath.Join(dir, e.Name()))
		if err != nil {
			return Outputs{}, fmt.Errorf("listing trace dir: %w", err)
		}
		scan(e.Name(), sub)
	}

	chosen, err := pickGroup(groups, dir)
	if err != nil {
		return Outputs{}, err
	}
	if chosen["kernel_trace"] == "" {
		if conv, err := pickGroup(rocpd, dir); err == nil && conv["kernel_trace"] != "" {
			if chosen == nil {
				chosen = map[string]string{}
			}
			for k, v := range conv {
				if chosen[k] == "" {
					chosen[k] = v
				}
			}
		}
	}
	out := Outputs{Other: map[string]string{}}
	for suffix, path := range chosen {
		switch suffix {
		case "kernel_trace":
			out.KernelTrace = path
		case "kernel_stats":
			out.KernelStats = path
		case "agent_info":
			out.AgentInfo = path
		default:
			out.Other[suffix] = path
		}
	}
	return out, nil
}

// pickGroup returns the only group, or the only one with a kernel trace.
func pickGroup(groups map[string]map[string]string, dir string) (map[string]string, error) {
	if len(groups) <= 1 {
		for _, g := range groups {
			return g, nil
		}
		return nil, nil
	}
	var keys, withTrace []string
	for k, g := range groups {
		keys = append(keys, k)
		if g["kernel_trace"] != "" {
			withTrace = append(withTrace, k)
		}
	}
	if len(withTrace) == 1 {
		return groups[withTrace[0]], nil
	}
	sort.Strings(keys)
	return nil, fmt.Errorf("finding profiler outputs in %s: files of several processes (%s); pass the output prefix the profile used (-o)",
		dir, safetext.Clean(strings.Join(keys, ", ")))
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// resultFileMark precedes each output path in rocprofv3's log lines on stderr.
const resultFileMark = "Opened result file:"

// OpenedResultFiles returns the paths of rocprofv3's "Opened result file: <path>"
// stderr lines, in order, without repeats. The profiler does not log every file (a
// real log lacks the kernel trace's), so use FindOutputs to locate outputs and this
// to report them.
func OpenedResultFiles(stderr []byte) []string {
	var paths []string
	seen := map[string]bool{}
	for len(stderr) > 0 {
		line := stderr
		if nl := bytes.IndexByte(stderr, '\n'); nl >= 0 {
			line, stderr = stderr[:nl], stderr[nl+1:]
		} else {
			stderr = nil
		}
		i := bytes.Index(line, []byte(resultFileMark))
		if i < 0 {
			continue
		}
		p := string(bytes.TrimSpace(line[i+len(resultFileMark):]))
		if p != "" && !seen[p] {
			seen[p] = true
			paths = append(paths, p)
		}
	}
	return paths
}
