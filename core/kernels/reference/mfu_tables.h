// SPDX-License-Identifier: Apache-2.0
// The reference's H100 MFU tables (bench_data/gemm, bench_data/mha: what blis-v2 and the
// corrected mode price from), immutable after construction. Not the measured mode's
// kernel packs (kernels/kernel_db.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/error.h"

namespace stepcalc {

/// One CSV file as columns of numbers (or one constant string, e.g. dtype "bf16").
/// The common form of the packed blob and of a CSV read for verification.
struct RawColumn {
  std::string name;
  bool is_text = false;
  std::string text;            ///< the value of every row when is_text
  std::vector<double> values;  ///< one per row when numeric
};

struct RawTable {
  std::string name;  ///< path below bench_data without ".csv", e.g. "gemm/h100/data"
  size_t num_rows = 0;
  std::vector<RawColumn> columns;
  const RawColumn* column(const std::string& column_name) const;
};

/// Decodes the packed blob written by tools/pack-tables.mjs (format in
/// docs/TABLES.md): a list of RawTables, bit-exact to the CSV values.
Expected<std::vector<RawTable>> unpack_tables(const uint8_t* data, size_t size);

/// Reads one bench_data CSV (all columns numeric but text columns that hold one
/// constant value); used by tests to prove the packing lossless.
Expected<RawTable> parse_csv_table(const std::string& name, const std::string& text);

/// One (K, N) weight shape of the GEMM table, with its rows sorted by M.
struct GemmPair {
  double k = 0, n = 0;
  std::vector<double> m_axis;      ///< sorted ascending
  std::vector<double> mfu;         ///< MFU at m_axis[i]
  std::vector<double> latency_us;  ///< measured kernel time at m_axis[i]
  std::vector<int> row;            ///< file row of m_axis[i]
  /// The pair's fastest measured FLOP/s, max over m of 2 m k n / latency (0 when no
  /// latency is positive): what `gemm_roofline` divides by the table's peak.
  double best_flops = 0;
};

struct GemmTable {
  std::vector<GemmPair> pairs;                   ///< in order of first appearance in the file
  std::vector<double> m, k, n, mfu, latency_us;  ///< every row, file order
};

/// Causal prefill attention, one table per attention config "H-Hkv-D".
struct PrefillTable {
  std::string key;
  int64_t heads = 0, kv_heads = 0, head_dim = 0;
  std::vector<double> seq_axis;  ///< sorted ascending
  std::vector<double> mfu, latency_us;
  std::vector<int> row;                    ///< file row of seq_axis[i]
  std::vector<double> file_seq, file_mfu;  ///< file order, for the fallback
};

/// Decode attention for one config and one TP degree, on a (batch, kv) grid.
struct DecodeTable {
  std::string key;  ///< attention config "H-Hkv-D"
  int64_t tp = 1;
  std::vector<double> bs_axis, kv_axis;  ///< sorted unique
  /// Grid index bs * kv_axis.size() + kv; row -1 where the cell is not measured.
  std::vector<double> mfu, latency_us;
  std::vector<int> row;
  std::vector<double> file_bs, file_kv, file_mfu;  ///< file order, for the fallback
  int cell_row(size_t ib, size_t ik) const { return row[ib * kv_axis.size() + ik]; }
  double cell_mfu(size_t ib, size_t ik) const { return mfu[ib * kv_axis.size() + ik]; }
};

/// All tables of one GPU. Built once; every lookup is a const method elsewhere.
struct MfuTables {
  std::string gpu;
  GemmTable gemm;
  std::vector<PrefillTable> prefill;  ///< sorted by key, byte-wise ascending
  std::vector<DecodeTable> decode;    ///< sorted by key, then tp

  /// Builds typed tables from raw ones (all tables of one GPU, e.g. "h100").
  static Expected<MfuTables> build(const std::vector<RawTable>& raw, const std::string& gpu);
  const PrefillTable* find_prefill(const std::string& key) const;
};

/// The H100 tables embedded in this build (decoded once, on first use).
const MfuTables& embedded_h100_tables();

/// The packed blob as embedded (for size reports and tests).
const uint8_t* embedded_tables_blob();
size_t embedded_tables_blob_size();

}  // namespace stepcalc
