#!/usr/bin/env bash
# Regenerates sdk/internal/pb from the protocol definitions in sdk/proto.
#
# The generators are pinned here and installed into <repo>/bin/tools (only
# when missing or at another version), so the output depends on nothing but
# these versions and the .proto files: running the script twice leaves the
# tree unchanged. buf compiles the protos itself; no protoc is needed. It
# also lints them (buf.yaml: STANDARD and COMMENTS, so every message, field
# and enum value must be documented) and fails on the first problem.
#
# Usage: sdk/scripts/genproto.sh   (from anywhere; `go generate ./sdk` runs it)
set -euo pipefail

readonly PROTOC_GEN_GO_VERSION=v1.36.12
readonly PROTOC_GEN_GO_GRPC_VERSION=v1.5.1
readonly BUF_VERSION=v1.50.0

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
tools="$root/bin/tools"
mkdir -p "$tools"

# ensure NAME PACKAGE VERSION WANT: install PACKAGE@VERSION into bin/tools
# unless bin/tools/NAME --version already prints WANT.
ensure() {
	local name=$1 package=$2 version=$3 want=$4 have=""
	if [[ -x "$tools/$name" ]]; then
		have="$("$tools/$name" --version 2>&1 || true)"
	fi
	if [[ "$have" != "$want" ]]; then
		echo "genproto: installing $package@$version into bin/tools" >&2
		# GOFLAGS is cleared so that a -modfile or -mod setting meant for the
		# project cannot reach the tool's own module.
		GOBIN="$tools" GOFLAGS= go install "$package@$version"
	fi
}

ensure protoc-gen-go google.golang.org/protobuf/cmd/protoc-gen-go \
	"$PROTOC_GEN_GO_VERSION" "protoc-gen-go $PROTOC_GEN_GO_VERSION"
ensure protoc-gen-go-grpc google.golang.org/grpc/cmd/protoc-gen-go-grpc \
	"$PROTOC_GEN_GO_GRPC_VERSION" "protoc-gen-go-grpc ${PROTOC_GEN_GO_GRPC_VERSION#v}"
ensure buf github.com/bufbuild/buf/cmd/buf \
	"$BUF_VERSION" "${BUF_VERSION#v}"

cd "$root/sdk"
export PATH="$tools:$PATH"
buf lint
buf format --diff --exit-code
buf generate
