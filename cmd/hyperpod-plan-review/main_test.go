package main

import (
	"os"
	"testing"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
)

// TestMain starts the local control plane for the acceptance tests (TF_ACC=1), as the provider's do.
func TestMain(m *testing.M) { os.Exit(acctest.Main(m, nil)) }
