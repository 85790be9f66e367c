package kube

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestReviewSettings(t *testing.T) {
	dir := t.TempDir()
	one, two := filepath.Join(dir, "one"), filepath.Join(dir, "two")
	for _, f := range []string{one, two} {
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	missing := filepath.Join(dir, "missing")
	sep := string(filepath.ListSeparator)
	home := filepath.Join("~", ".kube", "config")
	tests := []struct {
		name                string
		kubeconfig, context string
		env                 map[string]string
		want                Settings
	}{
		{name: "nothing set: kubectl's default file", want: Settings{ConfigPath: home}},
		{name: "the provider's KUBE_CONFIG_PATH and KUBE_CTX",
			env:  map[string]string{EnvConfigPath: one, EnvContext: "ci", EnvKubeconfig: two},
			want: Settings{ConfigPath: one, ConfigContext: "ci"}},
		{name: "the provider's KUBE_CONFIG_PATHS before KUBECONFIG",
			env:  map[string]string{EnvConfigPaths: one + sep + two, EnvKubeconfig: two},
			want: Settings{ConfigPaths: []string{one, two}}},
		{name: "KUBE_HOST names a cluster without a kubeconfig",
			env:  map[string]string{EnvHost: "https://h:6443", EnvToken: "tok", EnvKubeconfig: two},
			want: Settings{Host: "https://h:6443", Token: "tok"}},
		{name: "KUBECONFIG when no KUBE_* variable names a cluster, its missing files skipped",
			env:  map[string]string{EnvKubeconfig: one + sep + missing + sep + two, EnvContext: "ci"},
			want: Settings{ConfigPaths: []string{one, two}, ConfigContext: "ci"}},
		{name: "KUBECONFIG of missing files only: kubectl's default file",
			env:  map[string]string{EnvKubeconfig: missing},
			want: Settings{ConfigPath: home}},
		{name: "the flags win over the variables",
			kubeconfig: two, context: "flag",
			env:  map[string]string{EnvConfigPath: one, EnvConfigPaths: one, EnvContext: "ci", EnvKubeconfig: one},
			want: Settings{ConfigPath: two, ConfigContext: "flag"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReviewSettings(tt.kubeconfig, tt.context, mapLookup(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	if _, err := ReviewSettings("", "", mapLookup(map[string]string{EnvInsecure: "maybe"})); err == nil {
		t.Error("a KUBE_* variable that does not parse: want an error naming it, got none")
	}
}
