package kube

import (
	"os"
	"path/filepath"
)

// EnvKubeconfig is kubectl's list of kubeconfig files, which a plan review falls back to.
const EnvKubeconfig = "KUBECONFIG"

// ReviewSettings finds the cluster of a plan review as the provider finds its own: the given
// kubeconfig and context (flags; "" for none), then the KUBE_* variables the provider reads
// (KUBE_CONFIG_PATH, KUBE_CONFIG_PATHS, KUBE_CTX, KUBE_HOST, ...), then, where they name no
// cluster, kubectl's: the files of $KUBECONFIG, else ~/.kube/config. lookup is usually os.LookupEnv.
func ReviewSettings(kubeconfig, kubeContext string, lookup func(string) (string, bool)) (Settings, error) {
	s := Settings{ConfigPath: kubeconfig, ConfigContext: kubeContext}
	if err := s.ApplyEnv(lookup); err != nil {
		return Settings{}, err
	}
	if s.ConfigPath != "" || len(s.ConfigPaths) > 0 || s.Host != "" {
		return s, nil
	}
	if v, ok := lookup(EnvKubeconfig); ok && v != "" {
		// As kubectl does, files of the list that do not exist are skipped.
		for _, p := range filepath.SplitList(v) {
			if _, err := os.Stat(p); p != "" && err == nil {
				s.ConfigPaths = append(s.ConfigPaths, p)
			}
		}
		if len(s.ConfigPaths) > 0 {
			return s, nil
		}
	}
	s.ConfigPath = filepath.Join("~", ".kube", "config")
	return s, nil
}
