#include "executor/catalog/catalog_relations.h"

#include <cctype>

#include "executor/catalog/pg_catalog_tables.h"
#include "planner/catalog_oids.h"

namespace stave::executor {

namespace oid = planner::catalog_oid;

std::vector<Schema> Schemas() {
  std::vector<Schema> schemas;
  for (std::string_view name : {planner::kPgCatalogSchema, planner::kPublicSchema,
                                planner::kInformationSchema, planner::kSystemSchema}) {
    schemas.push_back({oid::Namespace(name), std::string(name)});
  }
  return schemas;
}

std::vector<Relation> Relations(const planner::Catalog& catalog) {
  std::vector<Relation> relations;
  for (const planner::CatalogObjectPtr& object : catalog.List()) {
    char kind = RelationKind(object->type);
    if (kind == 0) continue;
    relations.push_back({oid::ForObject(object->id), std::string(planner::kPublicSchema),
                         oid::kPublicNamespace, object->name, kind, object->columns, object});
  }
  std::string schema;
  int64_t next_oid = 0;
  for (const planner::SystemTable* table : catalog.SystemTables()) {
    if (table->schema != schema) {
      schema = table->schema;
      next_oid = oid::FirstSystemTable(schema);
    }
    // PostgreSQL's catalogs are tables; the other schemas hold views.
    char kind = schema == planner::kPgCatalogSchema ? 'r' : 'v';
    relations.push_back(
        {next_oid++, schema, oid::Namespace(schema), table->name, kind, table->columns, nullptr});
  }
  return relations;
}

std::string PrimaryKeyName(const planner::CatalogObject& table) { return table.name + "_pkey"; }

std::string ViewQuery(const planner::CatalogObject& view) {
  // The query follows the first AS that is followed by SELECT, WITH, VALUES or a parenthesis.
  const std::string& text = view.definition;
  auto word_at = [&](size_t at, std::string_view word) {
    if (at + word.size() > text.size()) return false;
    for (size_t i = 0; i < word.size(); ++i) {
      if (std::toupper(static_cast<unsigned char>(text[at + i])) != word[i]) return false;
    }
    size_t end = at + word.size();
    return end == text.size() || !std::isalnum(static_cast<unsigned char>(text[end]));
  };
  for (size_t i = 1; i + 2 < text.size(); ++i) {
    if (!std::isspace(static_cast<unsigned char>(text[i - 1])) || !word_at(i, "AS")) continue;
    size_t query = i + 2;
    while (query < text.size() && std::isspace(static_cast<unsigned char>(text[query]))) ++query;
    if (word_at(query, "SELECT") || word_at(query, "WITH") || word_at(query, "VALUES") ||
        (query < text.size() && text[query] == '(')) {
      return text.substr(query);
    }
  }
  return text;
}

}  // namespace stave::executor
