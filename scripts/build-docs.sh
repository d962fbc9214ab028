#!/usr/bin/env bash
# Builds the DocC documentation of every library product with the toolchain's `docc`,
# treating warnings as errors. No package plugin is involved, so packages that depend on
# this one never build or resolve one.
#
#   scripts/build-docs.sh [OUTPUT_DIR]     # default .build-docs/site
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.build-docs/site}
graphs=.build-docs/symbol-graphs
# The build emits a module's symbol graph when it compiles the module: keep the graphs of
# modules an incremental build leaves alone.
mkdir -p "$graphs/all" "$out"

modules=(StoreCore EntityStore EntityStoreSQLite EntityStoreCommands EntityStoreTesting)
for module in "${modules[@]}"; do
    swift build --scratch-path .build-docs/build --target "$module" \
        -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$PWD/$graphs/all" >/dev/null
done
for module in "${modules[@]}"; do
    rm -rf "${graphs:?}/$module" && mkdir -p "$graphs/$module"
    cp "$graphs/all/$module".symbols.json "$graphs/$module/"
    cp "$graphs/all/$module"@*.symbols.json "$graphs/$module/" 2>/dev/null || true
    docc convert "Sources/$module/$module.docc" \
        --fallback-display-name "$module" --fallback-bundle-identifier "org.entitystore.$module" \
        --additional-symbol-graph-dir "$graphs/$module" \
        --output-path "$out/$module.doccarchive" --warnings-as-errors
done
echo "documentation: $out"
