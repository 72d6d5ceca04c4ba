// Package hostlist matches the network destination of an argument against a
// user's list of hosts, for the policy hook (host_not_in) and the Guardian's
// rules engine (allowed_hosts).
//
// A list entry is a host name or IP address ("example.com", "10.0.0.1",
// "[::1]"), or a wildcard "*.example.com" that matches every subdomain of
// example.com but not example.com itself. Matching ignores case, a trailing
// dot and the port.
//
// What it must not do: resolve names (no DNS) or contact hosts; it compares
// strings only.
//
// Concurrency: a [List] is immutable after [Parse] and safe for concurrent
// use.
package hostlist
