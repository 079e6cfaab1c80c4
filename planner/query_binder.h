#pragma once

#include <string>
#include <vector>

#include "parser/ast.h"
#include "planner/catalog.h"
#include "planner/logical_plan.h"

namespace stave::planner {

/// What a SELECT is bound for: an ad-hoc query (reads materialized views' committed rows),
/// or the definition of a materialized view (reads streams as changelogs, runs forever).
enum class QueryPurpose { kBatch, kMaterializedView };

/// Binds a SELECT into a logical plan: resolves the FROM object, binds WHERE, GROUP BY,
/// aggregates, HAVING, the select list (expanding `*`), DISTINCT, ORDER BY (by ordinal, by
/// output name or by expression) and LIMIT/OFFSET. Throws SqlError with a SQLSTATE and the
/// position of the offending text. A materialized view's plan follows the planner revision
/// `plan_version` (kPlanVersion for a new view; the one it was created with on recovery).
BoundQuery BindQuery(const parser::SelectStatement& select, const Catalog& catalog,
                     QueryPurpose purpose, uint32_t plan_version = kPlanVersion);

/// Resolves a possibly qualified object name (`x`, `public.x`, `stave.public.x`) to the
/// bare name. Throws 3F000 for another schema.
std::string ResolveObjectName(const parser::QualifiedName& name, int position);

}  // namespace stave::planner
