#include "planner/catalog_oids.h"

#include "planner/catalog.h"

namespace stave::planner::catalog_oid {

int64_t FirstSystemTable(std::string_view schema) {
  if (schema == kPgCatalogSchema) return kPgCatalogTables;
  if (schema == kInformationSchema) return kInformationSchemaTables;
  if (schema == kSystemSchema) return kStaveCatalogTables;
  return 0;
}

int64_t Namespace(std::string_view schema) {
  if (schema == kPgCatalogSchema) return kPgCatalogNamespace;
  if (schema == kPublicSchema) return kPublicNamespace;
  if (schema == kInformationSchema) return kInformationSchemaNamespace;
  if (schema == kSystemSchema) return kStaveCatalogNamespace;
  return 0;
}

}  // namespace stave::planner::catalog_oid
