//go:build !linux

package main

import (
	"runtime"
	"syscall"
)

// No Pdeathsig outside Linux: a killed wrapper may leave the provider running until
// Terraform closes its stdio.
func wrapperSysProcAttr() *syscall.SysProcAttr { return nil }

// macOS reports ru_maxrss in bytes, the BSDs in KiB.
func maxRSSBytes(ru *syscall.Rusage) int64 {
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) * 1024
}

// Terraform gets its own process group.
func terraformSysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
