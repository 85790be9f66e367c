package kube

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Credentials that cannot be had fail the preview's first read, and the other reads are not sent:
// each would run the failing credential plugin again (the AWS CLI takes a second or more), and a
// plan would wait for all of them.
func TestListKueueStopsAtAFailingCredentialPlugin(t *testing.T) {
	api := newMemoryAPI(t)
	runs := filepath.Join(t.TempDir(), "runs")
	plugin := filepath.Join(t.TempDir(), "get-token")
	script := "#!/bin/sh\necho run >> " + runs + "\necho 'Unable to locate credentials' >&2\nexit 255\n"
	if err := os.WriteFile(plugin, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	s := api.settings(fastRetry)
	s.Token = ""
	s.Exec = &ExecSettings{APIVersion: "client.authentication.k8s.io/v1beta1", Command: plugin}
	_, err := ListKueue(context.Background(), NewClient(s))
	if err == nil || !strings.Contains(err.Error(), "get-token") {
		t.Fatalf("ListKueue with a failing credential plugin: %v, want the plugin's error", err)
	}
	out, err := os.ReadFile(runs)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(out), "run"); n != 1 {
		t.Errorf("the credential plugin ran %d times, want once", n)
	}
	if n := api.count(); n != 0 {
		t.Errorf("%d requests reached the API server, want none", n)
	}
}
