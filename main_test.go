package main

import (
	"os"
	"testing"
)

// Logs are silenced only when Terraform would drop them, and explicit settings win.
func TestSilenceUnreadLogs(t *testing.T) {
	vars := []string{"TF_LOG", "TF_LOG_PROVIDER", "TF_LOG_SDK", "TF_LOG_SDK_FRAMEWORK", "TF_LOG_SDK_PROTO", "TF_LOG_PROVIDER_HYPERPOD"}
	silenced := func(keep map[string]string) map[string]string {
		out := map[string]string{"TF_LOG_SDK": "OFF", "TF_LOG_SDK_FRAMEWORK": "OFF", "TF_LOG_SDK_PROTO": "OFF", "TF_LOG_PROVIDER_HYPERPOD": "OFF"}
		for k, v := range keep {
			out[k] = v
		}
		return out
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		want map[string]string // "" means unset
	}{
		{"nothing set", nil, silenced(nil)},
		{"TF_LOG=off", map[string]string{"TF_LOG": "off"}, silenced(map[string]string{"TF_LOG": "off"})},
		{"TF_LOG=DEBUG", map[string]string{"TF_LOG": "DEBUG"}, map[string]string{"TF_LOG": "DEBUG"}},
		{"TF_LOG_PROVIDER=TRACE", map[string]string{"TF_LOG_PROVIDER": "TRACE"}, map[string]string{"TF_LOG_PROVIDER": "TRACE"}},
		{"explicit SDK level kept", map[string]string{"TF_LOG_SDK": "WARN"}, silenced(map[string]string{"TF_LOG_SDK": "WARN"})},
		{"explicit framework level kept", map[string]string{"TF_LOG_SDK_FRAMEWORK": "DEBUG"}, silenced(map[string]string{"TF_LOG_SDK_FRAMEWORK": "DEBUG"})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, v := range vars {
				t.Setenv(v, "") // restored after the test
				_ = os.Unsetenv(v)
			}
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			silenceUnreadLogs()
			for _, v := range vars {
				if got := os.Getenv(v); got != tc.want[v] {
					t.Errorf("%s = %q, want %q", v, got, tc.want[v])
				}
			}
		})
	}
}
