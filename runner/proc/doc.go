// Package proc owns how perfbot runs a command and makes sure nothing the command
// started outlives it: the guard's attempts, the patcher's checker and verification
// commands and the job's build all start here.
//
// On Linux every command runs under a reaper of its own: perfbot itself, re-executed
// (a binary that imports this package doubles as the reaper), which is a child
// subreaper (PR_SET_CHILD_SUBREAPER). Every process the command starts stays below the
// reaper, even one that calls setsid and whose parent exits, so the command's processes
// are exactly the reaper's descendants: they can be named, signalled and waited for. The
// command runs in its own process group with a parent-death signal, and the reaper
// stops everything below it when perfbot itself dies, SIGKILL included. Elsewhere the
// command runs in its own process group without a reaper.
//
// It also reads /proc/<pid>/stat (ParseStat, ReadStat, Scan) for the guard. It must not
// decide what a command means (exit codes, verdicts, logs): its callers do.
package proc
