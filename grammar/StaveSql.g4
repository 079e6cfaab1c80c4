// The SQL dialect of Stave: a PostgreSQL-flavoured subset for streams, tables and materialized
// views.
//
// The expression rules follow the layering of Trino's SqlBase.g4: booleanExpression (NOT, AND,
// OR and predicates) over valueExpression (arithmetic and ||) over primaryExpression (literals,
// names, calls, CASE, casts). Operator precedence therefore comes from the rule structure and,
// inside a left-recursive rule, from the order of its alternatives (earlier binds tighter).
//
// ANTLR 4.7.2 has no caseInsensitive option, so keywords are spelled with one fragment per
// letter. Which words are reserved follows PostgreSQL: its reserved keywords (plus IS, LIKE,
// ILIKE and BETWEEN, which our expression syntax needs) cannot be bare identifiers; every other
// keyword we know is listed in nonReserved and stays usable as a column, table or alias name.
//
// The parser turns this tree into parser/ast.h nodes; this file knows nothing of the AST.
grammar StaveSql;

// ========================================================================================
// Statements

// A query string: statements separated by ';'. Empty statements (";;", a trailing ';', a
// comment-only string) are allowed and produce nothing.
multiStatement
    : statement? (SEMICOLON statement?)* EOF
    ;

// EXPLAIN takes any other statement, but not itself: as in PostgreSQL, "EXPLAIN EXPLAIN ..."
// is a syntax error. No statement begins with SINK or MATERIALIZED, so "EXPLAIN SINK name" and
// "EXPLAIN MATERIALIZED VIEW name" are unambiguous.
statement
    : EXPLAIN SINK qualifiedName                                       #explainSink
    | EXPLAIN MATERIALIZED VIEW qualifiedName                          #explainView
    | EXPLAIN explainableStatement                                     #explain
    | explainableStatement                                             #plainStatement
    // Users, as PostgreSQL's CREATE/ALTER/DROP USER and ROLE (a USER may log in by default).
    | CREATE kind=(USER | ROLE) identifier WITH? roleOption*           #createRole
    | ALTER kind=(USER | ROLE) identifier WITH? roleOption*            #alterRole
    | DROP kind=(USER | ROLE) (IF EXISTS)? identifier
        (COMMA identifier)*                                            #dropRole
    ;

roleOption
    : PASSWORD (stringValue | NULL_)
    | LOGIN
    | NOLOGIN
    ;

explainableStatement
    : query                                                            #selectStatement
    | CREATE STREAM (IF NOT EXISTS)? qualifiedName
        LPAREN streamElement (COMMA streamElement)* RPAREN
        streamOptions                                                  #createStream
    | CREATE TABLE (IF NOT EXISTS)? qualifiedName
        LPAREN tableElement (COMMA tableElement)* RPAREN
        (APPEND ONLY)? withClause?                                     #createTable
    | CREATE MATERIALIZED VIEW (IF NOT EXISTS)? qualifiedName AS query
        emitOnWindowClose?                                             #createMaterializedView
    // Refused with a hint: Stave's views are materialized.
    | CREATE VIEW qualifiedName (LPAREN identifier (COMMA identifier)* RPAREN)? AS query
                                                                       #createView
    // As in RisingWave, a sink either reads an existing relation (FROM) or runs a query of its
    // own (AS); the options of the AS form come before the query, which would otherwise end it.
    | CREATE SINK (IF NOT EXISTS)? name=qualifiedName
        (FROM input=qualifiedName streamOptions
        | streamOptions AS query emitOnWindowClose?)                   #createSink
    | INSERT INTO qualifiedName
        (LPAREN columns+=identifier (COMMA columns+=identifier)* RPAREN)?
        (VALUES valuesRow (COMMA valuesRow)* | query) returningClause? #insertStatement
    // SET is not reserved, yet "UPDATE t SET a = 1" has no alias: reading SET as the alias
    // would need a second SET.
    | UPDATE tableReference SET assignment (COMMA assignment)*
        (WHERE where=expression)? returningClause?                     #updateStatement
    | DELETE FROM tableReference (WHERE where=expression)?
        returningClause?                                               #deleteStatement
    | DROP objectType (IF EXISTS)? qualifiedName (CASCADE | RESTRICT)? #drop
    // SHOW STREAMS also matches "SHOW <variable>"; ANTLR resolves such ambiguities in favour
    // of the earlier alternative, so the object listings must come first.
    | SHOW objectTypePlural                                            #showObjects
    | SHOW TIME ZONE                                                   #showTimeZone
    | SHOW TRANSACTION ISOLATION LEVEL                                 #showTransactionIsolation
    | SHOW ALL                                                         #showAll
    | SHOW variableName                                                #showVariable
    | SET scope=(SESSION | LOCAL)? TIME ZONE timeZoneValue             #setTimeZone
    | SET scope=(SESSION | LOCAL)? variableName (EQ | TO)
        (DEFAULT | setValue (COMMA setValue)*)                         #setVariable
    | ALTER SYSTEM SET variableName (EQ | TO)
        (DEFAULT | setValue (COMMA setValue)*)                         #alterSystemSet
    | ALTER SINK qualifiedName action=(PAUSE | RESUME)                 #alterSink
    | RESET (ALL | TIME ZONE | variableName)                           #reset
    | BEGIN (WORK | TRANSACTION)? transactionModes?                    #beginTransaction
    | START TRANSACTION transactionModes?                              #startTransaction
    | (COMMIT | END) (WORK | TRANSACTION)?                             #commit
    | (ROLLBACK | ABORT) (WORK | TRANSACTION)?                         #rollback
    | CHECKPOINT                                                       #checkpoint
    | BACKUP TO stringValue                                            #backup
    ;

// ---------------------------------------------------------------------------------------
// SELECT

// A query: SELECTs combined by set operations (INTERSECT binds tighter than UNION and
// EXCEPT, which associate to the left), each maybe in parentheses, then ORDER BY, LIMIT and
// OFFSET, which apply to the whole (as in PostgreSQL; a SELECT in parentheses has its own).
query
    : queryExpression
      (ORDER BY sortItem (COMMA sortItem)*)?
      // PostgreSQL accepts LIMIT and OFFSET in either order.
      (limitClause offsetClause? | offsetClause limitClause?)?
    ;

queryExpression
    : queryTerm
    | left=queryExpression op=(UNION | EXCEPT) setQuantifier? right=queryTerm
    ;

queryTerm
    : queryPrimary
    | left=queryTerm op=INTERSECT setQuantifier? right=queryPrimary
    ;

// A VALUES list is a query of its own, as in PostgreSQL (`VALUES (1, 'a'), (2, 'b')`).
queryPrimary
    : querySpecification
    | VALUES valuesRow (COMMA valuesRow)*
    | LPAREN query RPAREN
    ;

querySpecification
    : SELECT (setQuantifier | distinctOn)? selectItem (COMMA selectItem)*
      (FROM fromItem (COMMA fromItem)*)?
      (WHERE where=expression)?
      (GROUP BY groupBy+=expression (COMMA groupBy+=expression)*)?
      (HAVING having=expression)?
    ;

setQuantifier
    : DISTINCT
    | ALL
    ;

// PostgreSQL's DISTINCT ON: the first row (in ORDER BY order) of each distinct value.
distinctOn
    : DISTINCT ON LPAREN expression (COMMA expression)* RPAREN
    ;

selectItem
    : expression (AS alias=anyWord | bareAlias=identifier)?   #selectSingle
    | qualifiedName DOT ASTERISK                              #selectAll
    | ASTERISK                                                #selectAll
    ;

tableReference
    : qualifiedName (AS? alias=identifier)?
    ;

// One item of a FROM list: a table, a subquery or a parenthesized join tree, then any number
// of joins, left to right (`a JOIN b ON ... LEFT JOIN c USING (k)`).
fromItem
    : fromPrimary                                                          #fromPrimaryItem
    | left=fromItem CROSS JOIN right=fromPrimary                           #crossJoin
    | left=fromItem joinType? JOIN right=fromItem joinCondition            #qualifiedJoin
    ;

fromPrimary
    : tableReference                                                       #fromTable
    | LPAREN query RPAREN AS? alias=identifier
        (LPAREN columnAliases+=identifier (COMMA columnAliases+=identifier)* RPAREN)?  #fromSubquery
    // Window table functions, as in RisingWave: TUMBLE(relation, time_column, size) and
    // HOP(relation, time_column, slide, size). The AST builder checks the function's name.
    | function=identifier LPAREN relation=qualifiedName COMMA timeColumn=identifier
        (COMMA expression)+ RPAREN (AS? alias=identifier)?                  #fromWindow
    // Set-returning functions in FROM: `unnest(a) WITH ORDINALITY AS u(x, n)`,
    // `pg_catalog.generate_series(1, n)`. Arguments may
    // name columns of the FROM items before it (LATERAL is implied, as in PostgreSQL).
    | LATERAL? (schema=identifier DOT)? function=identifier
        LPAREN (expression (COMMA expression)*)? RPAREN
        (WITH ORDINALITY)?
        (AS? alias=identifier
          (LPAREN columnAliases+=identifier (COMMA columnAliases+=identifier)* RPAREN)?)?  #fromFunction
    | LPAREN fromItem RPAREN                                               #fromParenthesized
    ;

joinType
    : INNER
    | LEFT OUTER?
    | RIGHT OUTER?
    | FULL OUTER?
    ;

joinCondition
    : ON expression
    | USING LPAREN identifier (COMMA identifier)* RPAREN
    ;

sortItem
    : expression ordering=(ASC | DESC)? (NULLS nullOrdering=(FIRST | LAST))?
    ;

// LIMIT ALL means no limit.
limitClause
    : LIMIT (ALL | expression)
    ;

offsetClause
    : OFFSET expression (ROW | ROWS)?
    ;

// ---------------------------------------------------------------------------------------
// CREATE STREAM / CREATE TABLE / CREATE SINK

// As in RisingWave: a view or sink grouped by a window emits each group once, final, when the
// watermark closes its window, instead of updating it as rows arrive.
emitOnWindowClose
    : EMIT ON WINDOW CLOSE
    ;

// A stream's columns, and at most one watermark (the AST builder refuses a second), as in
// Flink and RisingWave: WATERMARK FOR ts AS ts - INTERVAL '5' SECOND.
streamElement
    : columnDefinition
    | WATERMARK FOR identifier AS expression
    ;

// Columns and table constraints may be mixed in any order, as in PostgreSQL; the AST builder
// rejects a second primary key.
tableElement
    : columnDefinition
    | tableConstraint
    ;

tableConstraint
    : PRIMARY KEY LPAREN identifier (COMMA identifier)* RPAREN
    ;

columnDefinition
    : identifier dataType columnConstraint*
    ;

columnConstraint
    : NOT NULL_
    | NULL_
    | PRIMARY KEY
    ;

// WITH (...) and FORMAT may come in either order, each at most once. CREATE SINK shares them.
streamOptions
    : (withClause formatClause? | formatClause withClause?)?
    ;

withClause
    : WITH LPAREN property (COMMA property)* RPAREN
    ;

property
    : propertyKey EQ propertyValue
    ;

// Keys are dotted names (properties.bootstrap.servers) whose parts may be any word, reserved
// or not ("properties.group.id"), or a quoted string for keys that are not names
// ('fields.id.kind', 'scan.startup.timestamp-millis').
propertyKey
    : stringValue
    | anyWord (DOT anyWord)*
    ;

propertyValue
    : stringValue
    | signedNumber
    | anyWord
    ;

formatClause
    : FORMAT (identifier | stringValue)
    ;

// ---------------------------------------------------------------------------------------
// INSERT / UPDATE

valuesRow
    : LPAREN expression (COMMA expression)* RPAREN
    ;

// INSERT, UPDATE and DELETE ... RETURNING: a select list over the affected rows.
returningClause
    : RETURNING selectItem (COMMA selectItem)*
    ;

assignment
    : identifier EQ expression
    ;

// ---------------------------------------------------------------------------------------
// DROP / SHOW

objectType
    : STREAM
    | MATERIALIZED VIEW
    | TABLE
    | SINK
    | VIEW
    ;

objectTypePlural
    : STREAMS
    | MATERIALIZED VIEWS
    | TABLES
    | SINKS
    | VIEWS
    ;

// ---------------------------------------------------------------------------------------
// SET / RESET

// Configuration parameter names, possibly dotted ("stave.checkpoint_interval").
variableName
    : identifier (DOT identifier)*
    ;

setValue
    : stringValue
    | signedNumber
    | ON
    | booleanValue
    | identifier
    ;

// SET TIME ZONE LOCAL and SET TIME ZONE DEFAULT both reset the parameter.
timeZoneValue
    : stringValue
    | signedNumber
    | DEFAULT
    | identifier
    ;

// ---------------------------------------------------------------------------------------
// Transactions. Modes are parsed so that clients may send them, and are then ignored.

transactionModes
    : transactionMode (COMMA? transactionMode)*
    ;

transactionMode
    : ISOLATION LEVEL (SERIALIZABLE | REPEATABLE READ | READ COMMITTED | READ UNCOMMITTED)
    | READ (ONLY | WRITE)
    | NOT? DEFERRABLE
    ;

// ========================================================================================
// Expressions

expression
    : booleanExpression
    ;

// The predicate of a "predicated" alternative applies to its valueExpression, so a
// comparison cannot be chained (a = b = c is an error, as in PostgreSQL) and the bounds of
// BETWEEN are value expressions: in "x BETWEEN 1 AND 2 AND y" the second AND is logical.
booleanExpression
    : valueExpression predicate?                                     #predicated
    | NOT booleanExpression                                          #logicalNot
    | left=booleanExpression op=AND right=booleanExpression          #logicalBinary
    | left=booleanExpression op=OR right=booleanExpression           #logicalBinary
    ;

predicate
    : comparisonOperator quantifier=(ANY | SOME | ALL) LPAREN query RPAREN  #quantifiedComparison
    | comparisonOperator quantifier=(ANY | SOME | ALL) LPAREN array=expression RPAREN  #quantifiedArrayComparison
    | comparisonOperator right=valueExpression                           #comparison
    | NOT? BETWEEN lower=valueExpression AND upper=valueExpression       #between
    | NOT? IN LPAREN query RPAREN                                        #inSubquery
    | NOT? IN LPAREN expression (COMMA expression)* RPAREN               #inList
    | NOT? op=(LIKE | ILIKE) pattern=valueExpression
        (ESCAPE escape=valueExpression)?                                 #like
    | regexOperator pattern=valueExpression collateClause?               #regexMatch
    | IS NOT? NULL_                                                      #nullPredicate
    ;

// As in PostgreSQL, unary minus binds tighter than ^ (exponentiation, left-associative), ^
// tighter than *, and ||, the lowest of these, binds looser than + and -. The jsonb operators share the level of ||, PostgreSQL's level of "any
// other operator".
valueExpression
    : primaryExpression                                                   #valueExpressionDefault
    | op=(MINUS | PLUS) valueExpression                                   #arithmeticUnary
    | left=valueExpression op=CARET right=valueExpression                 #arithmeticBinary
    | left=valueExpression op=(ASTERISK | SLASH | PERCENT) right=valueExpression  #arithmeticBinary
    | left=valueExpression op=(PLUS | MINUS) right=valueExpression        #arithmeticBinary
    | left=valueExpression op=(CONCAT | ARROW | DOUBLE_ARROW | HASH_ARROW | HASH_DOUBLE_ARROW
        | CONTAINS | CONTAINED_BY) right=valueExpression                  #otherOperator
    ;

primaryExpression
    : NULL_                                                               #nullLiteral
    | booleanValue                                                        #booleanLiteral
    | number                                                              #numericLiteral
    | stringValue                                                         #stringLiteral
    | PARAMETER                                                           #parameter
    // A typed literal such as DATE '2024-01-31': a cast of the string. INTERVAL '5' SECOND
    // names the unit of a bare number (and the last field kept), as the SQL standard does.
    | dataTypeName stringValue intervalField?                             #typeConstructor
    | EXTRACT LPAREN (field=identifier | fieldText=stringValue) FROM valueExpression RPAREN  #extract
    | POSITION LPAREN substring=valueExpression IN text=valueExpression RPAREN  #position
    // The SQL standard's keyword forms of substring and trim; the comma forms are plain calls.
    | SUBSTRING LPAREN text=valueExpression (FROM start=valueExpression (FOR count=valueExpression)?
        | FOR count=valueExpression (FROM start=valueExpression)?) RPAREN   #substringFromFor
    | TRIM LPAREN side=(BOTH | LEADING | TRAILING)? (characters=valueExpression? FROM)?
        text=valueExpression RPAREN                                       #trimFrom
    | EXISTS LPAREN query RPAREN                                          #exists
    | LPAREN query RPAREN                                                 #scalarSubquery
    | functionName LPAREN ASTERISK RPAREN filterClause? overClause?       #functionCall
    | functionName LPAREN (setQuantifier? expression (COMMA expression)*
        (ORDER BY sortItem (COMMA sortItem)*)?)? RPAREN filterClause? overClause?  #functionCall
    | CASE operand=expression whenClause+ (ELSE elseResult=expression)? END  #simpleCase
    | CASE whenClause+ (ELSE elseResult=expression)? END                  #searchedCase
    | CAST LPAREN expression AS dataType RPAREN                           #cast
    | ARRAY LBRACKET (expression (COMMA expression)*)? RBRACKET           #arrayConstructor
    | ARRAY LPAREN query RPAREN                                           #arraySubquery
    | qualifiedName                                                       #columnReference
    | LPAREN expression RPAREN                                            #parenthesizedExpression
    // A field of a composite value: (information_schema._pg_expandarray(a)).n.
    | LPAREN expression RPAREN DOT field=identifier                       #fieldSelection
    // The PostgreSQL cast binds tighter than any operator: -a::int is -(a::int).
    | primaryExpression DOUBLE_COLON dataType                             #postfixCast
    | primaryExpression LBRACKET index=expression RBRACKET                #subscript
    ;

// An aggregate's FILTER: only the rows for which the condition is true reach the aggregate.
filterClause
    : FILTER LPAREN WHERE condition=expression RPAREN
    ;

// A window function's window: its partition and its order (no frame clause: the default
// frame, as PostgreSQL's).
overClause
    : OVER LPAREN (PARTITION BY partition+=expression (COMMA partition+=expression)*)?
      (ORDER BY sortItem (COMMA sortItem)*)? RPAREN
    ;

whenClause
    : WHEN condition=expression THEN result=expression
    ;

comparisonOperator
    : EQ | NEQ | LT | LTE | GT | GTE
    ;

// POSIX regular expression matches: ~ (case-sensitive), ~* (insensitive) and their
// negations. psql writes them schema-qualified, as OPERATOR(pg_catalog.~).
regexOperator
    : op=(TILDE | TILDE_ASTERISK | NOT_TILDE | NOT_TILDE_ASTERISK)
    | OPERATOR LPAREN (identifier DOT)? op=(TILDE | TILDE_ASTERISK | NOT_TILDE | NOT_TILDE_ASTERISK) RPAREN
    ;

// A collation, as psql writes after patterns (COLLATE pg_catalog.default). Stave compares
// text by its bytes, so the clause is accepted and has no effect.
collateClause
    : COLLATE (identifier | DEFAULT) (DOT (identifier | DEFAULT))*
    ;

// ========================================================================================
// Types

// A type as written; the binder resolves the name. The multi-word PostgreSQL spellings come
// first so that they win over "double" followed by an alias named "precision".
// `int[]` (a size in the brackets is allowed and ignored, as in PostgreSQL).
dataType
    : (DOUBLE PRECISION
      | CHARACTER VARYING typeModifiers?
      | dataTypeName typeModifiers? (withTimeZone=(WITH | WITHOUT) TIME ZONE)?)
      arrayBrackets*
    ;

arrayBrackets
    : LBRACKET INTEGER_VALUE? RBRACKET
    ;

dataTypeName
    : identifier (DOT identifier)*
    ;

intervalField
    : YEAR | MONTH | DAY | HOUR | MINUTE | SECOND
    ;

typeModifiers
    : LPAREN INTEGER_VALUE (COMMA INTEGER_VALUE)* RPAREN
    ;

// ========================================================================================
// Names and literals

qualifiedName
    : identifier (DOT identifier)*
    ;

// LEFT and RIGHT are reserved (they start joins) but still name the string functions, as in
// PostgreSQL.
functionName
    : qualifiedName
    | LEFT
    | RIGHT
    ;

identifier
    : IDENTIFIER
    | QUOTED_IDENTIFIER
    | nonReserved
    | temporalKeyword
    ;

// The keywords of interval qualifiers, EXTRACT, POSITION, SUBSTRING and TRIM; unreserved in
// PostgreSQL (a column may be named "day"), so they stay usable as identifiers.
temporalKeyword
    : DAY | EXTRACT | HOUR | MINUTE | MONTH | POSITION | SECOND | SUBSTRING | TRIM | YEAR
    ;

// Any word at all, for places where PostgreSQL accepts reserved keywords too: aliases after
// AS and the parts of WITH option keys.
anyWord
    : identifier
    | reserved
    ;

stringValue
    : STRING
    | ESCAPE_STRING
    ;

number
    : INTEGER_VALUE      #integerLiteral
    | DECIMAL_VALUE      #decimalLiteral
    ;

signedNumber
    : sign=(MINUS | PLUS)? number
    ;

booleanValue
    : TRUE_
    | FALSE_
    ;

// Keywords that are reserved in PostgreSQL (or that our expression syntax cannot allow as
// names). Every keyword token must be listed either here or in nonReserved.
reserved
    : ALL | AND | ANY | ARRAY | AS | ASC | BETWEEN | BOTH | CASE | CAST | COLLATE | CREATE | CROSS | DEFAULT
    | DEFERRABLE | DESC | DISTINCT | ELSE | END | EXCEPT | FALSE_ | FOR | FROM | FULL | GROUP
    | HAVING | ILIKE | IN | INNER | INTERSECT | INTO | IS | JOIN | LATERAL | LEADING | LEFT | LIKE
    | LIMIT | NATURAL
    | NOT | NULL_ | OFFSET | ON | ONLY | OR | ORDER | OUTER | PRIMARY | RETURNING | RIGHT
    | SELECT | SOME | TABLE | THEN | TO | TRAILING | TRUE_ | UNION | USING | WHEN | WHERE | WINDOW | WITH
    ;

// Keywords that remain usable as identifiers, as in PostgreSQL. APPEND, PAUSE, RESUME and SINK
// are no PostgreSQL keywords at all; VALUES, like CHARACTER and PRECISION, is one of its
// column-name keywords.
nonReserved
    : ABORT | ALTER | APPEND | BACKUP | BEGIN | BY | CASCADE | CHARACTER | CHECKPOINT | CLOSE | COMMIT
    | COMMITTED | DELETE | DOUBLE | DROP | EMIT | ESCAPE | EXISTS | EXPLAIN | FILTER | FIRST | FORMAT | IF | INSERT
    | ISOLATION | KEY | LAST | LEVEL | LOCAL | LOGIN | MATERIALIZED | NOLOGIN | NULLS | OPERATOR | ORDINALITY | OVER
    | PARTITION | PASSWORD | PAUSE | PRECISION | READ
    | REPEATABLE | RESET | RESTRICT | RESUME | ROLE | ROLLBACK | ROW | ROWS | SERIALIZABLE
    | SESSION
    | SET | SHOW | SINK | SINKS | START | STREAM | STREAMS | SYSTEM | TABLES | TIME
    | TRANSACTION | UNCOMMITTED | UPDATE | USER | VALUES | VARYING | VIEW | VIEWS | WATERMARK
    | WITHOUT | WORK | WRITE | ZONE
    ;

// ========================================================================================
// Lexer

// Keywords. They must precede IDENTIFIER: on a tie in length the first rule wins. NULL, TRUE
// and FALSE carry a trailing underscore because the plain names clash with C++ macros and
// keywords in the generated code.
ABORT: A B O R T;
ALL: A L L;
ALTER: A L T E R;
AND: A N D;
ANY: A N Y;
APPEND: A P P E N D;
ARRAY: A R R A Y;
AS: A S;
ASC: A S C;
BACKUP: B A C K U P;
BEGIN: B E G I N;
BETWEEN: B E T W E E N;
BOTH: B O T H;
BY: B Y;
CASCADE: C A S C A D E;
CASE: C A S E;
CAST: C A S T;
CHARACTER: C H A R A C T E R;
CHECKPOINT: C H E C K P O I N T;
CLOSE: C L O S E;
COLLATE: C O L L A T E;
COMMIT: C O M M I T;
COMMITTED: C O M M I T T E D;
CREATE: C R E A T E;
CROSS: C R O S S;
DEFAULT: D E F A U L T;
DEFERRABLE: D E F E R R A B L E;
DELETE: D E L E T E;
DESC: D E S C;
DISTINCT: D I S T I N C T;
DOUBLE: D O U B L E;
DROP: D R O P;
ELSE: E L S E;
EMIT: E M I T;
ESCAPE: E S C A P E;
END: E N D;
EXCEPT: E X C E P T;
EXISTS: E X I S T S;
EXPLAIN: E X P L A I N;
FALSE_: F A L S E;
FILTER: F I L T E R;
FIRST: F I R S T;
FOR: F O R;
FORMAT: F O R M A T;
FROM: F R O M;
FULL: F U L L;
GROUP: G R O U P;
HAVING: H A V I N G;
IF: I F;
ILIKE: I L I K E;
IN: I N;
INNER: I N N E R;
INSERT: I N S E R T;
INTERSECT: I N T E R S E C T;
INTO: I N T O;
IS: I S;
JOIN: J O I N;
ISOLATION: I S O L A T I O N;
KEY: K E Y;
LAST: L A S T;
LATERAL: L A T E R A L;
LEADING: L E A D I N G;
LEFT: L E F T;
LEVEL: L E V E L;
LIKE: L I K E;
LIMIT: L I M I T;
LOCAL: L O C A L;
LOGIN: L O G I N;
MATERIALIZED: M A T E R I A L I Z E D;
NATURAL: N A T U R A L;
NOLOGIN: N O L O G I N;
NOT: N O T;
NULL_: N U L L;
NULLS: N U L L S;
OFFSET: O F F S E T;
ON: O N;
ONLY: O N L Y;
OPERATOR: O P E R A T O R;
OR: O R;
ORDER: O R D E R;
ORDINALITY: O R D I N A L I T Y;
OUTER: O U T E R;
OVER: O V E R;
PARTITION: P A R T I T I O N;
POSITION: P O S I T I O N;
PASSWORD: P A S S W O R D;
PAUSE: P A U S E;
PRECISION: P R E C I S I O N;
PRIMARY: P R I M A R Y;
READ: R E A D;
REPEATABLE: R E P E A T A B L E;
RESET: R E S E T;
RESTRICT: R E S T R I C T;
RESUME: R E S U M E;
RETURNING: R E T U R N I N G;
RIGHT: R I G H T;
ROLE: R O L E;
ROLLBACK: R O L L B A C K;
ROW: R O W;
ROWS: R O W S;
SELECT: S E L E C T;
SERIALIZABLE: S E R I A L I Z A B L E;
SESSION: S E S S I O N;
SET: S E T;
SHOW: S H O W;
SINK: S I N K;
SINKS: S I N K S;
SOME: S O M E;
START: S T A R T;
STREAM: S T R E A M;
STREAMS: S T R E A M S;
SUBSTRING: S U B S T R I N G;
TABLE: T A B L E;
TABLES: T A B L E S;
THEN: T H E N;
TIME: T I M E;
TO: T O;
TRANSACTION: T R A N S A C T I O N;
TRAILING: T R A I L I N G;
TRIM: T R I M;
TRUE_: T R U E;
UNCOMMITTED: U N C O M M I T T E D;
UNION: U N I O N;
UPDATE: U P D A T E;
USER: U S E R;
USING: U S I N G;
VALUES: V A L U E S;
VARYING: V A R Y I N G;
VIEW: V I E W;
VIEWS: V I E W S;
WHEN: W H E N;
WATERMARK: W A T E R M A R K;
WHERE: W H E R E;
WINDOW: W I N D O W;
WITH: W I T H;
WITHOUT: W I T H O U T;
WORK: W O R K;
WRITE: W R I T E;
ZONE: Z O N E;
SYSTEM: S Y S T E M;

// The temporal keywords (see temporalKeyword).
DAY: D A Y;
EXTRACT: E X T R A C T;
HOUR: H O U R;
MINUTE: M I N U T E;
MONTH: M O N T H;
SECOND: S E C O N D;
YEAR: Y E A R;

// Operators and punctuation.
EQ: '=';
NEQ: '<>' | '!=';
LT: '<';
LTE: '<=';
GT: '>';
GTE: '>=';
PLUS: '+';
MINUS: '-';
ASTERISK: '*';
SLASH: '/';
PERCENT: '%';
CARET: '^';
CONCAT: '||';
DOUBLE_COLON: '::';
ARROW: '->';
DOUBLE_ARROW: '->>';
HASH_ARROW: '#>';
HASH_DOUBLE_ARROW: '#>>';
CONTAINS: '@>';
CONTAINED_BY: '<@';
TILDE: '~';
TILDE_ASTERISK: '~*';
NOT_TILDE: '!~';
NOT_TILDE_ASTERISK: '!~*';
LBRACKET: '[';
RBRACKET: ']';
LPAREN: '(';
RPAREN: ')';
COMMA: ',';
DOT: '.';
SEMICOLON: ';';

// 'it''s': a doubled quote stands for one quote; the parser strips and unescapes.
STRING: '\'' ( ~'\'' | '\'\'' )* '\'';

// E'a\nb': an escape string, whose backslash sequences the parser decodes.
ESCAPE_STRING: [eE] '\'' ( ~['\\] | '\\' . | '\'\'' )* '\'';

// Numbers keep their text; the binder decides their type and range. "1.5", "1.", ".5" and
// anything with an exponent are decimals.
INTEGER_VALUE: DIGIT+;
DECIMAL_VALUE
    : DIGIT+ '.' DIGIT* EXPONENT?
    | '.' DIGIT+ EXPONENT?
    | DIGIT+ EXPONENT
    ;

// A parameter placeholder of a prepared statement: $1, $2, ...
PARAMETER: '$' DIGIT+;

// Unquoted identifiers are folded to lower case by the parser. As in PostgreSQL, letters
// beyond ASCII are allowed and kept as written.
IDENTIFIER: IDENTIFIER_START IDENTIFIER_PART*;

// "Foo" keeps its case; a doubled quote stands for one quote.
QUOTED_IDENTIFIER: '"' ( ~'"' | '""' )* '"';

LINE_COMMENT: '--' ~[\r\n]* -> skip;
// Block comments nest, as in PostgreSQL.
BLOCK_COMMENT: '/*' ( BLOCK_COMMENT | . )*? '*/' -> skip;
WHITESPACE: [ \t\r\n\f\u000B]+ -> skip;

// Error tokens. They appear in no parser rule, so the parser reports a syntax error right at
// them, and the error listener turns them into PostgreSQL's messages. An unterminated
// literal can never beat its terminated form on length, so these only match when the closing
// quote (or "*/") is missing: they then run to the end of the input.
UNTERMINATED_STRING: '\'' ( ~'\'' | '\'\'' )*;
UNTERMINATED_QUOTED_IDENTIFIER: '"' ( ~'"' | '""' )*;
UNTERMINATED_BLOCK_COMMENT: '/*' ( ~'*' | '*'+ ~[*/] )* '*'*;
// Any other character ('$', '#', '?', ...). Catching it here means the lexer itself never
// fails: every bad input ends in one parser error at a known token.
ERROR_CHARACTER: .;

fragment IDENTIFIER_START: [a-zA-Z_\u0080-\u{10FFFF}];
fragment IDENTIFIER_PART: [a-zA-Z0-9_$\u0080-\u{10FFFF}];
fragment DIGIT: [0-9];
fragment EXPONENT: [eE] [+-]? DIGIT+;

fragment A: [aA];
fragment B: [bB];
fragment C: [cC];
fragment D: [dD];
fragment E: [eE];
fragment F: [fF];
fragment G: [gG];
fragment H: [hH];
fragment I: [iI];
fragment J: [jJ];
fragment K: [kK];
fragment L: [lL];
fragment M: [mM];
fragment N: [nN];
fragment O: [oO];
fragment P: [pP];
fragment Q: [qQ];
fragment R: [rR];
fragment S: [sS];
fragment T: [tT];
fragment U: [uU];
fragment V: [vV];
fragment W: [wW];
fragment X: [xX];
fragment Y: [yY];
fragment Z: [zZ];
