package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// The README's first steps run as written on a fresh machine: its install commands (in this clone,
// so without the clone itself), then terraform init and plan of its configuration, as a user
// whose home directory holds nothing, with no CLI configuration, no cluster and no network. The
// commands and the configuration are read from the README, so the test follows what it says.
func TestReadmeFirstSteps(t *testing.T) {
	terraform := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if terraform == "" {
		p, err := exec.LookPath("terraform")
		if err != nil {
			t.Skip("needs terraform on PATH or TF_ACC_TERRAFORM_PATH")
		}
		terraform = p
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	install := readmeBlock(t, string(readme), "first-steps:install")
	config := readmeBlock(t, string(readme), "first-steps:main.tf")
	run := readmeBlock(t, string(readme), "first-steps:run")

	home := t.TempDir()
	env := freshUserEnv(t, home, filepath.Dir(terraform))

	// The clone is this repository: drop the commands that make and enter it.
	var steps []string
	for _, line := range strings.Split(install, "\n") {
		if strings.HasPrefix(line, "git clone ") || line == "cd terraform-provider-hyperpod" {
			continue
		}
		steps = append(steps, line)
	}
	if !strings.Contains(strings.Join(steps, "\n"), "make install") {
		t.Fatalf("the README's install commands no longer run make install:\n%s", install)
	}
	shell(t, ".", env, strings.Join(steps, "\n"))

	// make install built the version CHANGELOG.md names, which the binary reports, into
	// Terraform's and OpenTofu's implied local mirror directories.
	version := changelogVersion(t)
	platform := runtime.GOOS + "_" + runtime.GOARCH
	for _, host := range []string{"registry.terraform.io", "registry.opentofu.org"} {
		bin := filepath.Join(home, ".terraform.d", "plugins", host, "quotaworks", "hyperpod", version, platform,
			"terraform-provider-hyperpod_v"+version)
		out, err := exec.Command(bin, "-version").Output()
		if err != nil {
			t.Fatalf("%s -version: %v", bin, err)
		}
		if got := strings.TrimSpace(string(out)); got != version {
			t.Errorf("%s reports version %q, want %q", bin, got, version)
		}
	}

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	out := shell(t, dir, env, run)
	for _, want := range []string{
		// From the mirror: the registry would have signed it.
		regexp.QuoteMeta("Installed quotaworks/hyperpod v" + version + " (unauthenticated)"),
		regexp.QuoteMeta("Plan: 1 to add, 0 to change, 0 to destroy."),
		// The amounts the README says the plan shows.
		`vcpu +?= 24\n`, `memory_in_gib +?= 96\n`, `efa +?= 1\n`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("the README's first steps printed no %q:\n%s", want, out)
		}
	}
}

// readmeBlock returns the fenced code block between <!-- marker --> and <!-- /marker -->.
func readmeBlock(t *testing.T, readme, marker string) string {
	t.Helper()
	re := regexp.MustCompile("(?s)<!-- " + regexp.QuoteMeta(marker) + " -->\n```[a-z]*\n(.*?)```\n<!-- /" + regexp.QuoteMeta(marker) + " -->")
	m := re.FindStringSubmatch(readme)
	if m == nil {
		t.Fatalf("README.md has no code block between <!-- %s --> and <!-- /%s -->", marker, marker)
	}
	return m[1]
}

// changelogVersion is the version of CHANGELOG.md's top heading, the one make install builds.
func changelogVersion(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^## ([0-9]+\.[0-9]+\.[0-9]+)( .*)?$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("CHANGELOG.md has no '## X.Y.Z' heading")
	}
	return string(m[1])
}

// freshUserEnv is this process's environment as a new user's shell would have it: home is the
// home directory, and nothing configures Terraform, the cluster or make. Go keeps this
// machine's caches and settings, so the build reuses what is already compiled.
func freshUserEnv(t *testing.T, home, terraformDir string) []string {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == "HOME", name == "PATH", name == "TF_CLI_CONFIG_FILE", name == "TERRAFORM_CONFIG",
			name == "TF_PLUGIN_CACHE_DIR", name == "TF_DATA_DIR", name == "TF_CLI_ARGS",
			strings.HasPrefix(name, "TF_CLI_ARGS_"), strings.HasPrefix(name, "XDG_"),
			strings.HasPrefix(name, "KUBE_"), name == "KUBECONFIG",
			name == "MAKEFLAGS", name == "MFLAGS", name == "MAKELEVEL":
			continue
		}
		env = append(env, kv)
	}
	for _, v := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOENV"} {
		out, err := exec.Command("go", "env", v).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", v, err)
		}
		env = append(env, v+"="+strings.TrimSpace(string(out)))
	}
	return append(env,
		"HOME="+home,
		// The terraform under test first, as on PATH for the user.
		"PATH="+terraformDir+string(os.PathListSeparator)+os.Getenv("PATH"),
		// Terraform's version check is the only request init would make otherwise.
		"CHECKPOINT_DISABLE=1",
	)
}

// shell runs a script of the README's commands with bash, stopping at the first that fails.
func shell(t *testing.T, dir string, env []string, script string) string {
	t.Helper()
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	text := ansi.ReplaceAllString(string(out), "")
	if err != nil {
		t.Fatalf("%s\n%s", fmt.Sprintf("in %s:\n%s\nfailed: %v", dir, script, err), text)
	}
	return text
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")
