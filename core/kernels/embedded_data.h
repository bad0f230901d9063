// Data compiled into the core by tools/pack-tables.mjs (build time, never by hand).
#pragma once

#include <cstddef>
#include <cstdint>

namespace stepcalc::embedded {

extern const uint8_t kTablesBlob[];
extern const size_t kTablesBlobSize;
extern const size_t kTablesCsvBytes;  ///< size of the CSV files the blob came from

/// A model preset: HF config.json text, minified.
struct PresetText {
  const char* name;
  const char* json;
};
extern const PresetText kModelPresets[];
extern const size_t kModelPresetCount;

}  // namespace stepcalc::embedded
