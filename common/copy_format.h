#pragma once

#include <string>

namespace stave {

/// The options of COPY ... TO STDOUT that shape its output, with PostgreSQL's defaults.
struct CopyFormat {
  bool csv = false;                 // FORMAT csv; otherwise PostgreSQL's text format.
  bool header = false;              // A first line with the column names.
  char delimiter = '\t';            // ',' in CSV.
  std::string null_string = "\\N";  // "" in CSV.
  char quote = '"';                 // CSV only.
  char escape = '"';                // CSV only; defaults to the quote.
};

}  // namespace stave
