// Package validate checks the Kubernetes manifests and the container
// image definition under deploy/ without a cluster or the network: every
// manifest is decoded strictly with the Kubernetes API types (an unknown
// or misspelt field fails), the objects are checked against each other
// (probes, ports, names, labels), and the ConfigMap's toolgate.hcl is
// loaded with toolgate's own config loader.
//
// It is a module of its own so that k8s.io/api and its dependencies stay
// out of toolgate's dependency graph; `make test` runs it explicitly.
// It holds tests only and must not be imported.
package validate
