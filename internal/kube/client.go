package kube

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"sync"

	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/retrypolicy"
)

// Client hands out Kubernetes clients built lazily from the provider
// settings. Creating a Client does no I/O and cannot fail, so a provider
// pointed at an unreachable (or not yet existing) cluster can still plan;
// the configuration is built, once, on the first call of a method, and an
// error from that build is remembered and returned by every later call.
// Building reads kubeconfig and certificate files but connects to nothing;
// the first network access is the first API request. Nothing here performs
// discovery or fetches OpenAPI documents. A Client is safe for concurrent
// use.
type Client struct {
	build func() (*rest.Config, error)
	retry RetrySettings
	// clock counts the retries' time budget and waits between attempts; nil is the wall
	// clock, which only tests replace.
	clock retrypolicy.Clock

	once      sync.Once
	config    *rest.Config
	clientset kubernetes.Interface
	dynamic   dynamic.Interface
	json      rest.Interface // JSON requests by absolute path, for Get, Apply and List
	err       error

	cache   readCache
	flavors flavorUsage
	primer  *primer
	groups  groupVersions
	kinds   servedKinds
}

// NewClient returns a Client for s. It does no I/O and never fails; errors in
// s surface from the first method call.
func NewClient(s Settings, opts ...Option) *Client {
	s = s.clone()
	c := &Client{build: s.RESTConfig, retry: s.Retry}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Option configures a Client.
type Option func(*Client)

// WithListPriming makes a run that reads many objects of a kind read the rest with one LIST
// of the objects matching labelSelector (see primer).
func WithListPriming(labelSelector string) Option {
	return func(c *Client) { c.primer = newPrimer(labelSelector) }
}

// NewClientFromConfig returns a Client for an existing client-go config (a
// copy of it is used), with the retry layer added on first use.
func NewClientFromConfig(cfg *rest.Config, r RetrySettings) *Client {
	cfg = rest.CopyConfig(cfg)
	return &Client{build: func() (*rest.Config, error) { return cfg, nil }, retry: r}
}

// retryClock is the clock of the client's retries.
func (c *Client) retryClock() retrypolicy.Clock {
	if c.clock == nil {
		return retrypolicy.Wall
	}
	return c.clock
}

// Clientset returns the typed client.
func (c *Client) Clientset(ctx context.Context) (kubernetes.Interface, error) {
	if err := c.init(ctx); err != nil {
		return nil, err
	}
	return c.clientset, nil
}

// Dynamic returns the dynamic client (for Kueue's custom resources).
func (c *Client) Dynamic(ctx context.Context) (dynamic.Interface, error) {
	if err := c.init(ctx); err != nil {
		return nil, err
	}
	return c.dynamic, nil
}

// RESTConfig returns a copy of the configuration the clients use, retry
// layer, rate limiter and user agent included, for building other clients.
func (c *Client) RESTConfig(ctx context.Context) (*rest.Config, error) {
	if err := c.init(ctx); err != nil {
		return nil, err
	}
	return rest.CopyConfig(c.config), nil
}

func (c *Client) init(ctx context.Context) error {
	c.once.Do(func() {
		c.err = c.doInit(ctx)
		if c.err != nil {
			tflog.SubsystemDebug(tflog.NewSubsystem(ctx, LogSubsystem), LogSubsystem,
				"cannot build Kubernetes client configuration", map[string]interface{}{"kube_error": c.err.Error()})
		}
	})
	return c.err
}

func (c *Client) doInit(ctx context.Context) error {
	if err := c.retry.Validate(); err != nil {
		return err
	}
	cfg, err := c.build()
	if err != nil {
		return err
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = DefaultUserAgent
	}
	wrapRetries(cfg, c.retry, c.retryClock())

	// No client-side rate limiter unless qps asks for one: client-go's 5 QPS
	// default would turn a refresh of 100 teams into minutes, while the API
	// server's Priority and Fairness already answers overload with 429 and
	// Retry-After (honoured by the retry layer). controller-runtime made the
	// same choice in v0.21. When qps is set, one limiter serves the typed and
	// the dynamic client, so it limits the provider as a whole.
	switch {
	case cfg.RateLimiter != nil:
	case cfg.QPS > 0:
		burst := cfg.Burst
		if burst <= 0 {
			burst = max(rest.DefaultBurst, int(math.Ceil(float64(cfg.QPS))))
		}
		cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(cfg.QPS, burst)
	default:
		cfg.QPS = -1 // client-go: a negative QPS means no limiter
	}

	// One HTTP client (connection pool, TLS, credentials) for both clients.
	var httpClient *http.Client
	if httpClient, err = rest.HTTPClientFor(cfg); err != nil {
		return fmt.Errorf("building Kubernetes HTTP client: %w", err)
	}
	cs, err := kubernetes.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return fmt.Errorf("building Kubernetes client: %w", err)
	}
	dyn, err := dynamic.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return fmt.Errorf("building Kubernetes dynamic client: %w", err)
	}
	jsonCfg := dynamic.ConfigFor(cfg)
	jsonCfg.ContentType, jsonCfg.AcceptContentTypes = "application/json", "application/json"
	jsonCfg.GroupVersion, jsonCfg.APIPath = nil, "/"
	js, err := rest.UnversionedRESTClientForConfigAndClient(jsonCfg, httpClient)
	if err != nil {
		return fmt.Errorf("building Kubernetes REST client: %w", err)
	}
	c.config, c.clientset, c.dynamic, c.json = cfg, cs, dyn, js
	tflog.SubsystemDebug(tflog.NewSubsystem(ctx, LogSubsystem), LogSubsystem, "Kubernetes client configured", map[string]interface{}{
		"kube_host":         redactHost(cfg.Host),
		"kube_max_attempts": c.retry.WithDefaults().MaxAttempts,
	})
	return nil
}

// redactHost drops any user information from a server URL before logging it.
func redactHost(host string) string {
	u, err := url.Parse(host)
	if err != nil {
		return "(unparsable host)"
	}
	u.User = nil
	return u.String()
}
