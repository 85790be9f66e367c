package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// make uninstall removes what make install put into Terraform's and OpenTofu's implied local
// mirror directories, every version of quotaworks/hyperpod, and leaves other providers there alone:
// while the folders exist, terraform init never installs the provider from the registry.
func TestMakeUninstall(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("needs make")
	}
	home := t.TempDir()
	plugins := filepath.Join(home, ".terraform.d", "plugins")
	var ours []string
	for _, host := range []string{"registry.terraform.io", "registry.opentofu.org"} {
		for _, version := range []string{"0.1.0", "0.1.1"} {
			dir := filepath.Join(plugins, host, "quotaworks", "hyperpod", version, "linux_amd64")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "terraform-provider-hyperpod_v"+version), nil, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		ours = append(ours, filepath.Join(plugins, host, "quotaworks"))
	}
	other := filepath.Join(plugins, "registry.terraform.io", "example", "other", "1.0.0")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command("make", "--no-print-directory", "uninstall")
	cmd.Env = append(os.Environ(), "HOME="+home, "MAKEFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make uninstall: %v\n%s", err, out)
	}
	for _, dir := range ours {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s is still there after make uninstall (stat: %v)", dir, err)
		}
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("make uninstall removed another provider's folder: %v", err)
	}

	// Nothing installed is nothing to remove, and no failure.
	cmd = exec.Command("make", "--no-print-directory", "uninstall")
	cmd.Env = append(os.Environ(), "HOME="+home, "MAKEFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make uninstall without an installed provider: %v\n%s", err, out)
	}
}
