# Podium: a Kubernetes operator for hosted secrets and evaluation leaderboards.
#   make dev    start the whole system locally on an embedded control plane, with samples
#   make test   run every test with the race detector (regenerates generated files first)

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

GO            ?= go
CONTROLLER_GEN = $(GO) tool controller-gen
ASSETS         = $(shell bash hack/controlplane.sh)
IMG           ?= podium:dev
VERSION       ?= dev
GOTEST_FLAGS  ?= -timeout 30m
# Every Go file of the tree, tracked or not (bin/, .podium-dev/ and .podium-e2e/ hold no sources of ours).
GO_FILES       = $(shell find . \( -path ./bin -o -path ./.podium-dev -o -path ./.podium-e2e -o -path ./.git \) -prune -o -name '*.go' -print)
# golangci-lint, pinned in its own module (hack/tools/go.mod) so the main go.mod does not
# carry its dependencies; built from the Go module proxy into bin/ on first use.
GOLANGCI_LINT  = $(CURDIR)/bin/golangci-lint

.PHONY: all
all: build

##@ Development

.PHONY: manifests
manifests: ## Generate CRDs and RBAC from the API types and markers, the run admission policies and the delivery webhook's match conditions from internal/admissiongen.
	$(CONTROLLER_GEN) rbac:roleName=podium-operator crd paths="./..." output:crd:artifacts:config=config/crd/bases
	go run ./hack/admissiongen

.PHONY: generate
generate: ## Generate DeepCopy methods.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."

.PHONY: verify-gen
verify-gen: manifests generate ## Regenerate and fail if generated files differ from the committed ones (CI).
	@if [ -n "$$(git status --porcelain -- api config)" ]; then \
	  echo "generated files are not committed; run 'make manifests generate' and commit:"; \
	  git status --porcelain -- api config; git --no-pager diff --stat -- api config; exit 1; fi

.PHONY: fmt
fmt: ## Run gofmt on every Go file, committed or not.
	gofmt -l -w $(GO_FILES)

.PHONY: vet
vet: ## Run go vet (also on test/e2e, behind its build tag, and hack/image and hack/loadgen, modules of their own).
	$(GO) vet ./...
	$(GO) vet -tags e2e ./test/e2e/
	$(GO) -C hack/image vet ./...
	$(GO) -C hack/loadgen vet ./...

.PHONY: fmt-check
fmt-check: ## Fail when a Go file, committed or not, is not gofmt-clean.
	@out=$$(gofmt -l $(GO_FILES)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

$(GOLANGCI_LINT): hack/tools/go.mod hack/tools/go.sum
	cd hack/tools && $(GO) build -o $(GOLANGCI_LINT) ./golangci-lint

# Every Go module of the repository: the main one and those under hack/ with a go.mod of
# their own (each is linted from its directory, with the repository's .golangci.yml).
GO_MODULES     = . hack/image hack/loadgen hack/tools

.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run golangci-lint (.golangci.yml: vet, staticcheck, errorlint, importas, depguard, ...) on every Go module.
	@set -e; for m in $(GO_MODULES); do echo ">> golangci-lint $$m"; (cd $$m && $(GOLANGCI_LINT) run --allow-parallel-runners ./...); done

.PHONY: depguard-check
depguard-check: $(GOLANGCI_LINT) ## Prove every architecture gate of .golangci.yml fails on a planted violation.
	bash hack/depguard-check.sh

.PHONY: duplicates
duplicates: ## List the pairs of repeated code between non-test Go files (the duplicates tool; not part of make test).
	@bash hack/duplicates.sh

.PHONY: controlplane
controlplane: ## Build (or reuse) kube-apiserver, etcd and kubectl into bin/k8s/.
	@bash hack/controlplane.sh

.PHONY: test
test: manifests generate fmt-check vet controlplane build ## Run every test, with -race, against the real control plane.
	KUBEBUILDER_ASSETS="$(ASSETS)" PODIUM_BIN="$(CURDIR)/bin" $(GO) test -race ./... -count=1 $(GOTEST_FLAGS)
	$(GO) -C hack/image test -race ./... -count=1 $(GOTEST_FLAGS)

.PHONY: e2e
e2e: ## As root: a real single-node cluster (kubelet, containerd, CNI, kube-proxy), Podium installed from dist/install.yaml, the e2e tests; stops it all.
	bash hack/e2e/run.sh

.PHONY: e2e-down
e2e-down: ## Stop a node left running by PODIUM_E2E_KEEP=1 make e2e and remove what it left.
	@dir="$${PODIUM_E2E_DIR:-$(CURDIR)/.podium-e2e}"; \
	if [ -f "$$dir/runner.pid" ] && kill -TERM "$$(cat "$$dir/runner.pid")" 2>/dev/null; then \
	  while kill -0 "$$(cat "$$dir/runner.pid")" 2>/dev/null; do sleep 1; done; fi; \
	if [ -x bin/podium-e2e-node ]; then bin/podium-e2e-node clean -dir "$$dir" -node-assets "$$(bash hack/controlplane.sh node)"; fi

.PHONY: bench
bench: controlplane build ## Print benchmark figures (see docs/performance.md).
	KUBEBUILDER_ASSETS="$(ASSETS)" PODIUM_BIN="$(CURDIR)/bin" bash hack/bench.sh

.PHONY: dev
dev: controlplane build ## Run everything locally on an embedded control plane with sample data.
	KUBEBUILDER_ASSETS="$(ASSETS)" bin/podium-dev

.PHONY: dev-reset
dev-reset: ## Wipe the local control plane's data.
	rm -rf .podium-dev

##@ Build

.PHONY: build
build: ## Build podium-operator, podium and the dev runner into bin/.
	$(GO) build -o bin/podium-operator ./cmd/operator
	$(GO) build -o bin/podium ./cmd/podium
	$(GO) build -o bin/podium-dev ./hack/dev

.PHONY: build-installer
build-installer: manifests controlplane ## Write dist/install.yaml, the one file that installs a release (image $(IMG)).
	@bash hack/build-installer.sh "$(ASSETS)/kubectl" "$(IMG)" dist/install.yaml

.PHONY: chart
chart: controlplane ## Write charts/podium/files/ from config/ (kustomize of config/default and the overlays).
	$(GO) run ./hack/chart "$(ASSETS)/kubectl"

.PHONY: image
image: ## Assemble the OCI image without Docker: dist/image and dist/podium-image.oci.tar.
	CGO_ENABLED=0 GOOS=linux $(GO) build -trimpath -ldflags "-s -w" -o dist/bin/podium-operator ./cmd/operator
	CGO_ENABLED=0 GOOS=linux $(GO) build -trimpath -ldflags "-s -w -X podium.dev/podium/internal/cli.Version=$(VERSION)" -o dist/bin/podium ./cmd/podium
	$(GO) -C hack/image run . --operator ../../dist/bin/podium-operator --cli ../../dist/bin/podium \
	  --out ../../dist/image --archive ../../dist/podium-image.oci.tar --ref $(IMG) --version $(VERSION) \
	  --revision "$$(git rev-parse HEAD 2>/dev/null || true)" \
	  --created "$${SOURCE_DATE_EPOCH:-$$(git log -1 --format=%ct 2>/dev/null || echo 0)}"

.PHONY: docker-build
docker-build: ## Build the container image with the Dockerfile (needs a Docker engine; `make image` does not).
	docker build -t $(IMG) .

##@ Deployment

.PHONY: install
install: manifests ## Install the CRDs into the cluster of the current kubeconfig.
	$(ASSETS)/kubectl apply --server-side -k config/crd

.PHONY: uninstall
uninstall: ## Remove the CRDs (and every Podium object) from the cluster.
	$(ASSETS)/kubectl delete -k config/crd

.PHONY: deploy
deploy: manifests ## Deploy the operator (image $(IMG)) to the cluster of the current kubeconfig.
	$(ASSETS)/kubectl kustomize config/default | sed 's|image: podium:dev|image: $(IMG)|' | $(ASSETS)/kubectl apply --server-side -f -

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*?##/ { printf "  %-14s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)
