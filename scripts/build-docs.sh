#!/usr/bin/env bash
# Builds the DocC documentation of every library product with the toolchain's `docc`,
# treating warnings as errors. No package plugin is involved, so packages that depend on
# this one never build or resolve one.
#
#   scripts/build-docs.sh [OUTPUT_DIR]     # default .build-docs/site
#
# The symbol graphs are extracted from the modules of the ordinary debug build with the
# PostgreSQL trait (`swift test --traits PostgreSQL` builds the same ones), so after the
# tests this builds nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.build-docs/site}
graphs=.build-docs/symbol-graphs
mkdir -p "$out"

modules=(StoreCore EntityStore EntityStoreSQLite EntityStoreCommands EntityStoreTesting EntityStorePostgres)
swift build --traits PostgreSQL >/dev/null
bin=$(swift build --traits PostgreSQL --show-bin-path)
triple=$(basename "$(dirname "$bin")")
# The C modules the Swift modules import: SwiftPM's generated module maps and the
# packages' own (as the compiler is given them).
module_maps=()
while IFS= read -r map; do
    case "$map" in /*) ;; *) map="$PWD/$map" ;; esac
    module_maps+=(-Xcc "-fmodule-map-file=$map")
done < <(find "$bin" -maxdepth 2 -name module.modulemap; find Sources .build/checkouts -name module.modulemap -path '*include*' -not -path '*/Benchmarks/*' -not -path '*/Tests/*'; find Sources -maxdepth 2 -name module.modulemap)

# The system libraries' headers outside the default search path (libpq's).
for flag in $(pkg-config --cflags-only-I libpq sqlite3 2>/dev/null); do
    module_maps+=(-Xcc "$flag")
done

for module in "${modules[@]}"; do
    rm -rf "${graphs:?}/$module" && mkdir -p "$graphs/$module"
    swift symbolgraph-extract -module-name "$module" -target "$triple" -I "$bin/Modules" "${module_maps[@]}" \
        -minimum-access-level public -output-dir "$graphs/$module"
    docc convert "Sources/$module/$module.docc" \
        --fallback-display-name "$module" --fallback-bundle-identifier "org.entitystore.$module" \
        --additional-symbol-graph-dir "$graphs/$module" \
        --output-path "$out/$module.doccarchive" --warnings-as-errors
done
echo "documentation: $out"
