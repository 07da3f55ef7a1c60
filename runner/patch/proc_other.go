//go:build !unix

package patch

import "os/exec"

// killGroupOnCancel keeps exec's default (kill the process itself) where process
// groups do not exist.
func killGroupOnCancel(*exec.Cmd) {}
