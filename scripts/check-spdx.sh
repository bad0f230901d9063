#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every source file (C++, JavaScript, TypeScript, shell) names its licence in an SPDX
# line within its first three lines; prints the files that do not and fails.
set -euo pipefail
cd "$(dirname "$0")/.."
missing=0
while IFS= read -r -d '' f; do
  if ! head -n 3 "$f" | grep -q 'SPDX-License-Identifier: Apache-2.0'; then
    echo "no SPDX-License-Identifier line: $f"
    missing=1
  fi
done < <(find core cli wasm web tools scripts tests bench -type f \
  \( -name '*.cpp' -o -name '*.h' -o -name '*.js' -o -name '*.mjs' -o -name '*.cjs' -o -name '*.ts' -o -name '*.sh' \) \
  -not -path 'web/dist/*' -not -path 'wasm/dist/*' -not -path '*/node_modules/*' -print0)
exit "$missing"
