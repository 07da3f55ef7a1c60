// Package runner is the host side of perfbot: everything that runs on the machine with
// the GPU (the guard, the profile and test jobs, host facts, trace reading and analysis,
// source patching) lives in its sub-packages. runner never imports bot: results flow
// from here to the GitHub side through files, never through calls.
package runner
