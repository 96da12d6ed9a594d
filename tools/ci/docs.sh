#!/usr/bin/env bash
# Every relative link and every file, folder and Bazel target that README.md and docs/
# name must exist (tools/ci/docs_check.py says how each is found). One line per problem.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec python3 tools/ci/docs_check.py
