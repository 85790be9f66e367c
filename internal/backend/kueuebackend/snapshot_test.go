package kueuebackend

import (
	"strings"
	"testing"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/admission"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kube"
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
		release, tag, args := managerRelease([]kube.ManagerContainer{{Image: c.image, Args: []string{"--feature-gates=TopologyAwareScheduling=false"}}})
		if release.Version != c.version || release.Minor != c.minor {
			t.Errorf("%s: release %+v, want version %v minor %d", c.image, release, c.version, c.minor)
		}
		s := kueueSnapshot{managerTag: tag}
		s.Version = admission.Latest
		s.Manager.Known = true
		if release.Version != 0 {
			s.Cluster, s.versionFound = s.WithRelease(release), true
		}
		if got := s.versionText(); got != c.text {
			t.Errorf("%s: VersionText() = %q, want %q", c.image, got, c.text)
		}
		if gates := featureGates(args); len(gates) != 1 || gates["TopologyAwareScheduling"] {
			t.Errorf("%s: feature gates %v", c.image, gates)
		}
	}
	unread := kueueSnapshot{}
	unread.Version, unread.versionFound, unread.FairSharing = admission.V0_19, true, true
	if got := unread.versionText(); !strings.Contains(got, "could not be read from kueue-system/kueue-manager-config") ||
		!strings.Contains(got, "fair sharing on") {
		t.Errorf("an unread configuration: VersionText() = %q", got)
	}
}
