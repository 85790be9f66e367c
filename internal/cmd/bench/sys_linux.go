package main

import "syscall"

// The provider dies with the wrapper even if Terraform kills the wrapper outright.
func wrapperSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// Linux reports ru_maxrss in KiB.
func maxRSSBytes(ru *syscall.Rusage) int64 { return ru.Maxrss * 1024 }

// Terraform gets its own process group, and an interrupt if the bench dies.
func terraformSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
