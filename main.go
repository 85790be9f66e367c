// Command terraform-provider-hyperpod serves the hyperpod Terraform provider.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/provider"
)

// Run "go generate" to format example terraform files and generate the docs for the registry/website.

//go:generate terraform fmt -recursive ./examples/
//go:generate go run -C tools github.com/hashicorp/terraform-plugin-docs/cmd/tfplugindocs generate --provider-dir .. --provider-name hyperpod

// version is stamped by goreleaser (-X main.version=...); "dev" for local builds.
var version = "dev"

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "set to true to run the provider with support for debuggers like delve")
	flag.Parse()

	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address: "registry.terraform.io/quotaworks/hyperpod",
		Debug:   debug,
	})
	if err != nil {
		log.Fatal(err.Error())
	}
}
