// Package demo runs perfbot's whole `/profile rocm` flow on this machine, without a GPU
// and without GitHub: a local GitHub (internal/fakegithub) holding a sample mlxcel
// repository with a bare git remote, `perfbot serve` in-process, signed webhook
// deliveries, the dispatched profile workflow run through the Action's own entry on the
// simulated gfx1151 host (internal/fakehost), and the published pull request and
// comments. Everything it needs is embedded in the binary. Options.Command and
// Options.Change run another command (a compare) against a pull request head that
// plants a known change.
//
// It must never talk to anything but 127.0.0.1 and the folders it creates.
package demo
