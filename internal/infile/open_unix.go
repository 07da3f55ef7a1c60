//go:build unix

package infile

import "syscall"

// openFlags make opening a FIFO return at once instead of waiting for a writer; a
// regular file reads the same with or without O_NONBLOCK.
const openFlags = syscall.O_NONBLOCK
