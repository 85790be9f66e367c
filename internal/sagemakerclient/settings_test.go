package sagemakerclient

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestSettingsProblems(t *testing.T) {
	valid := Settings{ClusterARN: testClusterARN}
	for _, tc := range []struct {
		name   string
		change func(*Settings)
		want   map[string]string // attribute -> message substring
	}{
		{name: "minimal", change: func(*Settings) {}},
		{name: "everything valid", change: func(s *Settings) {
			s.Region, s.Endpoint, s.STSEndpoint = "eu-west-1", "https://vpce.example.com", "http://127.0.0.1:8080"
			s.AccessKey, s.SecretKey, s.Token = testAccessKey, testSecretKey, testToken
			s.AssumeRole = &AssumeRoleSettings{
				RoleARN: "arn:aws:iam::123456789012:role/quota-admin", SessionName: "terraform@ci", ExternalID: "tenant-42",
				Duration: time.Hour, Policy: `{"Version":"2012-10-17","Statement":[]}`,
				PolicyARNs: []string{"arn:aws:iam::aws:policy/ReadOnlyAccess"},
				Tags:       map[string]string{"team": "ml"}, TransitiveTagKeys: []string{"team"},
			}
		}},
		{name: "region equal to the cluster's", change: func(s *Settings) { s.Region = "us-west-2" }},

		{name: "no cluster", change: func(s *Settings) { s.ClusterARN = "" },
			want: map[string]string{"cluster_arn": "cluster_arn: the HyperPod cluster ARN is empty"}},
		{name: "cluster name", change: func(s *Settings) { s.ClusterARN = "ml-cluster" },
			want: map[string]string{"cluster_arn": "looks like a cluster name"}},
		{name: "region of another cluster", change: func(s *Settings) { s.Region = "eu-west-1" },
			want: map[string]string{"region": `region "eu-west-1" differs from the cluster's region "us-west-2"`}},
		{name: "region not a region", change: func(s *Settings) { s.Region = "Oregon" },
			want: map[string]string{"region": `region "Oregon" is not an AWS region name`}},
		{name: "endpoint without scheme", change: func(s *Settings) { s.Endpoint = "vpce.example.com" },
			want: map[string]string{"endpoint": `endpoint "vpce.example.com" is not an absolute http or https URL`}},
		{name: "sts endpoint", change: func(s *Settings) { s.STSEndpoint = "ftp://sts" },
			want: map[string]string{"sts_endpoint": "is not an absolute http or https URL"}},
		{name: "access key alone", change: func(s *Settings) { s.AccessKey = testAccessKey },
			want: map[string]string{"secret_key": "access_key is set without secret_key"}},
		{name: "secret key alone", change: func(s *Settings) { s.SecretKey = testSecretKey },
			want: map[string]string{"access_key": "secret_key is set without access_key"}},
		{name: "token alone", change: func(s *Settings) { s.Token = testToken },
			want: map[string]string{"token": "token is a session token for access_key and secret_key"}},
		{name: "assume role without a role", change: func(s *Settings) { s.AssumeRole = &AssumeRoleSettings{} },
			want: map[string]string{"assume_role.role_arn": "assume_role.role_arn must be set"}},
		{name: "assume role, everything wrong", change: func(s *Settings) {
			s.AssumeRole = &AssumeRoleSettings{
				RoleARN: "arn:aws:iam::123456789012:user/alice", SessionName: "a", ExternalID: "x",
				Duration: time.Minute, Policy: "{not json", PolicyARNs: []string{"ReadOnlyAccess"},
				TransitiveTagKeys: []string{"team"},
			}
		}, want: map[string]string{
			"assume_role.role_arn":            `"arn:aws:iam::123456789012:user/alice" is not an IAM role ARN`,
			"assume_role.session_name":        `assume_role.session_name "a" must be 2 to 64`,
			"assume_role.external_id":         "assume_role.external_id must be 2 to 1224",
			"assume_role.duration":            "assume_role.duration 1m0s is outside STS's range of 15m0s to 12h0m0s",
			"assume_role.policy":              "assume_role.policy is not valid JSON",
			"assume_role.policy_arns":         `"ReadOnlyAccess" is not an IAM policy ARN`,
			"assume_role.transitive_tag_keys": `"team" is not a key of assume_role.tags`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := valid
			tc.change(&s)
			got := map[string]string{}
			for _, p := range s.Problems() {
				if _, dup := got[p.Attribute]; dup {
					t.Errorf("two problems for %s", p.Attribute)
				}
				got[p.Attribute] = p.Message
				for _, secret := range []string{testSecretKey, testToken} {
					if strings.Contains(p.Message, secret) {
						t.Errorf("problem %q contains a secret", p.Message)
					}
				}
			}
			if len(got) != len(tc.want) {
				t.Errorf("problems = %v, want attributes %v", got, tc.want)
			}
			for attr, want := range tc.want {
				if !strings.Contains(got[attr], want) {
					t.Errorf("problem for %s = %q, want it to contain %q", attr, got[attr], want)
				}
			}
		})
	}
}

func TestSettingsStringHidesSecrets(t *testing.T) {
	s := Settings{ClusterARN: testClusterARN, Profile: "ml", AccessKey: testAccessKey, SecretKey: testSecretKey, Token: testToken,
		AssumeRole: &AssumeRoleSettings{RoleARN: "arn:aws:iam::123456789012:role/quota-admin"}}
	for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
		out := fmt.Sprintf(format, s)
		for _, secret := range []string{testAccessKey, testSecretKey, testToken} {
			if strings.Contains(out, secret) {
				t.Errorf("%s shows a secret: %s", format, out)
			}
		}
		for _, want := range []string{testClusterARN, "Profile:ml", "SecretKey:" + sensitive, "quota-admin"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s lacks %q: %s", format, want, out)
			}
		}
	}
}
