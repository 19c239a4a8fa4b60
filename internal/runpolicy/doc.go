// Package runpolicy holds no code: its tests run the admission policies that guard runs
// (config/admission/run_integrity.yaml, and the rule podium-run-identity of
// run_isolation.yaml; docs/design/delivery.md, "Runs cannot be changed or impersonated") against
// a real kube-apiserver, with Podium's delivery webhook and kube-controller-manager's
// workload controllers running.
package runpolicy
