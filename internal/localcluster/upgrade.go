package localcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// UpgradeKueue replaces the running Kueue with the release whose assets are in assets, the way
// an operator upgrades it in place: the manager stops, its webhook registrations go, the new
// release's CRDs replace the old ones, and the new manager starts and registers its webhooks.
// Objects stay in etcd in the version they were stored in until they are next written, as on
// a real cluster. timeout bounds the new manager's start (0 means 120 s).
func (c *Cluster) UpgradeKueue(ctx context.Context, assets string, timeout time.Duration) error {
	if c.attached {
		return errors.New("localcluster: cannot upgrade Kueue of a control plane this process did not start")
	}
	if c.kueue == nil {
		return errors.New("localcluster: this control plane runs no Kueue manager to upgrade (Options.Kueue)")
	}
	if missing := missingKueueAssets(assets); len(missing) > 0 {
		return fmt.Errorf("%w: %s has no %s; run scripts/controlplane-assets.sh with %s set to its release",
			ErrAssetsMissing, assets, strings.Join(missing, ", "), EnvKueueVersion)
	}
	if err := CheckAssets(assets); err != nil {
		return err
	}
	if timeout == 0 {
		timeout = 120 * time.Second
	}
	kubeconfig, err := os.ReadFile(filepath.Join(c.stateDir, "kueue", "kubeconfig"))
	if err != nil {
		return fmt.Errorf("kueue: the running manager's kubeconfig: %w", err)
	}

	_ = c.kueue.stop()
	c.kueue = nil
	if err := c.deleteKueueWebhooks(ctx); err != nil {
		return err
	}
	// envtest updates a CRD that exists: its spec becomes the new release's, with conversion
	// off until the new manager registers its conversion webhooks.
	crds, err := envtest.InstallCRDs(c.RESTConfig, envtest.CRDInstallOptions{
		Paths:              []string{filepath.Join(assets, CRDsDir)},
		ErrorIfPathMissing: true,
		MaxTime:            60 * time.Second,
	})
	if err != nil {
		return fmt.Errorf("kueue: installing the CRDs of %s: %w", assets, err)
	}
	c.CRDs = crds
	return c.startKueue(ctx, assets, string(kubeconfig), timeout)
}

// deleteKueueWebhooks removes the webhook registrations startKueue made (named kueue-*): with
// the manager gone, they would refuse every write of a Kueue object.
func (c *Cluster) deleteKueueWebhooks(ctx context.Context) error {
	admission := c.Clientset.AdmissionregistrationV1()
	mutating, err := admission.MutatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("kueue: listing webhook configurations: %w", err)
	}
	validating, err := admission.ValidatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("kueue: listing webhook configurations: %w", err)
	}
	kinds := []struct {
		names  []string
		delete func(context.Context, string, metav1.DeleteOptions) error
	}{
		{kueueRegistrations(mutating.Items), admission.MutatingWebhookConfigurations().Delete},
		{kueueRegistrations(validating.Items), admission.ValidatingWebhookConfigurations().Delete},
	}
	found := 0
	for _, kind := range kinds {
		for _, name := range kind.names {
			found++
			if err := kind.delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("kueue: deleting %s: %w", name, err)
			}
		}
	}
	if found == 0 {
		return errors.New("kueue: found no webhook registrations of the running manager")
	}
	return nil
}

// kueueRegistrations names the webhook configurations registerKueueWebhooks created.
func kueueRegistrations[T any, P interface {
	*T
	metav1.Object
}](items []T) []string {
	var names []string
	for i := range items {
		if name := P(&items[i]).GetName(); strings.HasPrefix(name, "kueue-") {
			names = append(names, name)
		}
	}
	return names
}
