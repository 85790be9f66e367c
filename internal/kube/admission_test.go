package kube

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/admission"
)

// The manager's release comes from its image tag, its feature gates from its arguments, and
// the warning names the release modelled, what models it and what is assumed for lack of a read.
func TestManagerRelease(t *testing.T) {
	cases := []struct {
		image   string
		version admission.Version
		minor   int
		text    string
	}{
		{"registry.k8s.io/kueue/kueue:v0.19.2", admission.V0_19, 19, "Kueue v0.19, the manager's version"},
		{"registry.k8s.io/kueue/kueue:v0.15.0@sha256:ab", admission.V0_15, 15, "Kueue v0.15, the manager's version"},
		{"localhost:5000/kueue:v0.17.0", admission.V0_19, 17, "Kueue v0.17 (modelled as v0.19), the manager's version"},
		{"localhost:5000/kueue:v0.21.0", 0, 0, "Kueue v0.19 (the manager runs v0.21.0, which the preview does not model)"},
		{"registry.k8s.io/kueue/kueue", 0, 0, "Kueue v0.19 (the manager's version could not be read from kueue-system/kueue-controller-manager)"},
	}
	for _, c := range cases {
		d := appsv1.Deployment{}
		d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "manager", Image: c.image, Args: []string{"--feature-gates=TopologyAwareScheduling=false"}}}
		release, tag, args := managerRelease(d)
		if release.Version != c.version || release.Minor != c.minor {
			t.Errorf("%s: release %+v, want version %v minor %d", c.image, release, c.version, c.minor)
		}
		s := KueueSnapshot{ManagerTag: tag}
		s.Version = admission.Latest
		s.Manager.Known = true
		if release.Version != 0 {
			s.Cluster, s.VersionFound = s.WithRelease(release), true
		}
		if got := s.VersionText(); got != c.text {
			t.Errorf("%s: VersionText() = %q, want %q", c.image, got, c.text)
		}
		if gates := featureGates(args); len(gates) != 1 || gates["TopologyAwareScheduling"] {
			t.Errorf("%s: feature gates %v", c.image, gates)
		}
	}
	unread := KueueSnapshot{}
	unread.Version, unread.VersionFound, unread.FairSharing = admission.V0_19, true, true
	if got := unread.VersionText(); !strings.Contains(got, "could not be read from kueue-system/kueue-manager-config") ||
		!strings.Contains(got, "fair sharing on") {
		t.Errorf("an unread configuration: VersionText() = %q", got)
	}
}

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
