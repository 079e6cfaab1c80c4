// pgJDBC against staved: PreparedStatements with server-side parameters (the extended query
// protocol), binary results after prepareThreshold executions, batches, and a cursor with a
// fetch size inside a transaction, and DatabaseMetaData (getSchemas, getTables, getColumns) as
// DBeaver and Metabase browse, and CopyManager's COPY FROM STDIN / TO STDOUT. Run by
// extended_protocol_test.py with the server's port, and the password of the user stave when the
// server asks for one, as its arguments.

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;

public class PgJdbcClient {
  static void check(boolean condition, String message) {
    if (!condition)
      throw new AssertionError(message);
  }

  public static void main(String[] args) throws Exception {
    String url = "jdbc:postgresql://127.0.0.1:" + args[0] + "/stave?user=stave";
    java.util.Properties login = new java.util.Properties();
    if (args.length > 1) {
      // A wrong password is refused with 28P01.
      java.util.Properties wrong = new java.util.Properties();
      wrong.setProperty("password", args[1] + "-wrong");
      try (Connection refused = DriverManager.getConnection(url, wrong)) {
        throw new AssertionError("a wrong password was accepted");
      } catch (SQLException e) {
        check("28P01".equals(e.getSQLState()),
            "wrong password: " + e.getSQLState() + " " + e.getMessage());
      }
      login.setProperty("password", args[1]);
    }
    try (Connection connection = DriverManager.getConnection(url, login)) {
      try (Statement statement = connection.createStatement()) {
        statement.execute(
            "CREATE TABLE jdbc_items (id BIGINT PRIMARY KEY, name TEXT, price DOUBLE PRECISION, "
            + "ok BOOLEAN, at TIMESTAMP, small SMALLINT, n INT)");
      }
      Timestamp at = Timestamp.valueOf("2024-01-31 12:30:15.25");

      // Batch inserts: many Bind/Execute pairs before one Sync.
      try (PreparedStatement insert =
               connection.prepareStatement("INSERT INTO jdbc_items VALUES (?, ?, ?, ?, ?, ?, ?)")) {
        for (int i = 1; i <= 100; i++) {
          insert.setLong(1, i);
          insert.setString(2, "item " + i);
          insert.setDouble(3, i * 0.25);
          insert.setBoolean(4, i % 2 == 0);
          insert.setTimestamp(5, at);
          insert.setShort(6, (short) (i % 7));
          if (i == 100)
            insert.setNull(7, Types.INTEGER);
          else
            insert.setInt(7, i * 10);
          insert.addBatch();
        }
        int[] counts = insert.executeBatch();
        check(counts.length == 100 && counts[0] == 1, "batch counts");
      }

      // Ten executions: after prepareThreshold (5) pgJDBC uses a named statement and binary
      // results.
      try (PreparedStatement select = connection.prepareStatement(
               "SELECT name, price, ok, at, small, n, id FROM jdbc_items WHERE id = ?")) {
        for (int run = 1; run <= 10; run++) {
          select.setLong(1, run);
          try (ResultSet rs = select.executeQuery()) {
            check(rs.next(), "a row in run " + run);
            check(rs.getString(1).equals("item " + run),
                "name in run " + run + ": " + rs.getString(1));
            check(rs.getDouble(2) == run * 0.25, "price in run " + run);
            check(rs.getBoolean(3) == (run % 2 == 0), "ok in run " + run);
            check(rs.getTimestamp(4).equals(at), "at in run " + run + ": " + rs.getTimestamp(4));
            check(rs.getShort(5) == run % 7, "small in run " + run);
            check(rs.getInt(6) == run * 10, "n in run " + run);
            check(rs.getLong(7) == run, "id in run " + run);
            check(!rs.next(), "one row in run " + run);
          }
        }
        // By now the driver runs a named server-side statement (and asks for binary results).
        check(select.unwrap(org.postgresql.PGStatement.class).isUseServerPrepare(),
            "a server-prepared statement after prepareThreshold executions");
        select.setLong(1, 100);
        try (ResultSet rs = select.executeQuery()) {
          check(rs.next() && rs.getObject(6) == null, "NULL int");
        }
      }

      // A cursor: with autocommit off and a fetch size, rows come 10 at a time from a portal.
      connection.setAutoCommit(false);
      try (PreparedStatement scan =
               connection.prepareStatement("SELECT id FROM jdbc_items WHERE id > ? ORDER BY id")) {
        scan.setFetchSize(10);
        scan.setLong(1, 0);
        long expected = 1;
        try (ResultSet rs = scan.executeQuery()) {
          while (rs.next()) {
            check(rs.getLong(1) == expected, "cursor row " + expected);
            expected++;
          }
        }
        check(expected == 101, "cursor saw " + (expected - 1) + " rows");
      }
      try (PreparedStatement update =
               connection.prepareStatement("UPDATE jdbc_items SET name = ? WHERE id = ?")) {
        update.setString(1, "changed");
        update.setLong(2, 1);
        check(update.executeUpdate() == 1, "UPDATE count");
      }
      connection.commit();
      connection.setAutoCommit(true);

      try (PreparedStatement select =
               connection.prepareStatement("SELECT name FROM jdbc_items WHERE id = ?")) {
        select.setLong(1, 1);
        try (ResultSet rs = select.executeQuery()) {
          check(rs.next() && rs.getString(1).equals("changed"), "committed UPDATE");
        }
      }

      // An error carries its SQLSTATE and the connection goes on.
      try (PreparedStatement bad =
               connection.prepareStatement("SELECT nosuch FROM jdbc_items WHERE id = ?")) {
        bad.setLong(1, 1);
        bad.executeQuery();
        check(false, "an unknown column must fail");
      } catch (SQLException error) {
        check("42703".equals(error.getSQLState()), "SQLSTATE " + error.getSQLState());
      }
      try (PreparedStatement count =
               connection.prepareStatement("SELECT count(*) FROM jdbc_items WHERE id <= ?")) {
        count.setInt(1, 50);
        try (ResultSet rs = count.executeQuery()) {
          check(rs.next() && rs.getLong(1) == 50, "count after an error");
        }
      }

      // setQueryTimeout, as DBeaver and Metabase set it: pgJDBC sends a CancelRequest when the
      // time is up, and the statement fails with 57014. A cross join that meets nothing runs
      // for minutes otherwise. It holds its intermediate rows, about 1 GB a second: the
      // session's memory limit is raised so that the timeout, not the limit, ends it.
      try (Statement limit = connection.createStatement()) {
        limit.execute("SET query_memory_limit = '8GB'");
      }
      try (PreparedStatement slow = connection.prepareStatement(
               "SELECT count(*) FROM jdbc_items a, jdbc_items b, jdbc_items c, jdbc_items d "
               + "WHERE a.id + b.id + c.id + d.id = ?")) {
        slow.setQueryTimeout(1);
        slow.setLong(1, -1);
        long started = System.nanoTime();
        try {
          slow.executeQuery();
          check(false, "the slow query must time out");
        } catch (SQLException error) {
          double seconds = (System.nanoTime() - started) / 1e9;
          check("57014".equals(error.getSQLState()), "timeout SQLSTATE " + error.getSQLState());
          check(seconds < 10, "the timeout took " + seconds + " s");
        }
      }
      try (PreparedStatement count =
               connection.prepareStatement("SELECT count(*) FROM jdbc_items WHERE id <= ?")) {
        count.setInt(1, 50);
        try (ResultSet rs = count.executeQuery()) {
          check(rs.next() && rs.getLong(1) == 50, "count after a timeout");
        }
      }
    }
    try (Connection connection = DriverManager.getConnection(url, login)) {
      checkMetadata(connection);
      checkCopy(connection);
    }
    System.out.println("pgJDBC: ok");
  }

  // CopyManager: COPY ... FROM STDIN and TO STDOUT, as bulk loaders on the JVM use them.
  static void checkCopy(Connection connection) throws Exception {
    try (Statement statement = connection.createStatement()) {
      statement.execute("CREATE TABLE jdbc_copied (id INT PRIMARY KEY, name VARCHAR)");
    }
    org.postgresql.copy.CopyManager copy =
        connection.unwrap(org.postgresql.PGConnection.class).getCopyAPI();
    StringBuilder csv = new StringBuilder("id,name\n");
    for (int i = 1; i <= 500; ++i) csv.append(i).append(",\"name ").append(i).append(", ok\"\n");
    long copied = copy.copyIn("COPY jdbc_copied FROM STDIN WITH (FORMAT csv, HEADER)",
        new java.io.StringReader(csv.toString()));
    check(copied == 500, "copyIn count: " + copied);
    try {
      copy.copyIn(
          "COPY jdbc_copied FROM STDIN (FORMAT csv)", new java.io.StringReader("501,x\n1,dup\n"));
      check(false, "a duplicate key must fail the COPY");
    } catch (SQLException error) {
      check("23505".equals(error.getSQLState()), "COPY duplicate: " + error.getSQLState());
    }
    java.io.StringWriter out = new java.io.StringWriter();
    long written = copy.copyOut(
        "COPY (SELECT id, name FROM jdbc_copied WHERE id <= 2 ORDER BY id) TO STDOUT", out);
    check(
        written == 2 && out.toString().equals("1\tname 1, ok\n2\tname 2, ok\n"), "copyOut: " + out);
    try (Statement statement = connection.createStatement();
         ResultSet rs = statement.executeQuery("SELECT count(*) FROM jdbc_copied")) {
      check(rs.next() && rs.getLong(1) == 500, "rows after COPY");
    }
  }

  // DatabaseMetaData, as DBeaver and Metabase browse a database: pgJDBC's own catalog queries.
  static void checkMetadata(Connection connection) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      statement.execute(
          "CREATE TABLE jdbc_pairs (b INT, a VARCHAR NOT NULL, c INT, PRIMARY KEY (c, a))");
      statement.execute(
          "CREATE MATERIALIZED VIEW jdbc_prices AS SELECT ok, max(price) AS top FROM jdbc_items "
          + "GROUP BY ok");
      statement.execute(
          "CREATE STREAM jdbc_ticks (symbol VARCHAR, at TIMESTAMP) WITH (connector = 'datagen', "
          + "'rows-per-second' = '1')");
    }
    DatabaseMetaData meta = connection.getMetaData();
    List<String> schemas = new ArrayList<>();
    try (ResultSet rs = meta.getSchemas()) {
      while (rs.next()) schemas.add(rs.getString("TABLE_SCHEM"));
    }
    check(schemas.contains("public") && schemas.contains("pg_catalog")
            && schemas.contains("information_schema"),
        "getSchemas: " + schemas);

    List<String> tables = new ArrayList<>();
    try (ResultSet rs = meta.getTables(null, "public", "jdbc%", null)) {
      while (rs.next()) tables.add(rs.getString("TABLE_NAME") + ":" + rs.getString("TABLE_TYPE"));
    }
    check(tables.contains("jdbc_items:TABLE") && tables.contains("jdbc_pairs:TABLE")
            && tables.contains("jdbc_prices:MATERIALIZED VIEW")
            && tables.contains("jdbc_ticks:FOREIGN TABLE")
            && tables.contains("jdbc_pairs_pkey:INDEX") && tables.size() == 6,
        "getTables: " + tables);
    List<String> onlyTables = new ArrayList<>();
    try (ResultSet rs = meta.getTables(null, "public", "%", new String[] {"TABLE"})) {
      while (rs.next()) onlyTables.add(rs.getString("TABLE_NAME"));
    }
    check(onlyTables.contains("jdbc_items") && !onlyTables.contains("jdbc_prices"),
        "getTables(TABLE): " + onlyTables);

    List<String> columns = new ArrayList<>();
    try (ResultSet rs = meta.getColumns(null, "public", "jdbc_pairs", "%")) {
      while (rs.next()) {
        columns.add(rs.getString("COLUMN_NAME") + ":" + rs.getInt("DATA_TYPE") + ":"
            + rs.getString("TYPE_NAME") + ":" + rs.getString("IS_NULLABLE") + ":"
            + rs.getInt("ORDINAL_POSITION"));
      }
    }
    check(columns.equals(List.of("b:" + Types.INTEGER + ":int4:YES:1",
              "a:" + Types.VARCHAR + ":varchar:NO:2", "c:" + Types.INTEGER + ":int4:NO:3")),
        "getColumns: " + columns);
    List<String> viewColumns = new ArrayList<>();
    try (ResultSet rs = meta.getColumns(null, "public", "jdbc_prices", "%")) {
      while (rs.next())
        viewColumns.add(rs.getString("COLUMN_NAME") + ":" + rs.getString("TYPE_NAME"));
    }
    check(viewColumns.equals(List.of("ok:bool", "top:float8")),
        "getColumns of a view: " + viewColumns);

    // getPrimaryKeys reads information_schema._pg_expandarray(i.indkey) and its fields .n and .x:
    // the key's columns in key order (c, then a), each with its position in the key, as pgJDBC sorts them.
    List<String> key = new ArrayList<>();
    try (ResultSet rs = meta.getPrimaryKeys(null, "public", "jdbc_pairs")) {
      while (rs.next()) {
        key.add(rs.getString("COLUMN_NAME") + ":" + rs.getInt("KEY_SEQ") + ":" + rs.getString("PK_NAME"));
      }
    }
    check(key.equals(List.of("c:1:jdbc_pairs_pkey", "a:2:jdbc_pairs_pkey")), "getPrimaryKeys: " + key);
    List<String> otherKey = new ArrayList<>();
    try (ResultSet rs = meta.getPrimaryKeys(null, "public", "jdbc_items")) {
      while (rs.next()) otherKey.add(rs.getString("COLUMN_NAME") + ":" + rs.getInt("KEY_SEQ"));
    }
    check(otherKey.equals(List.of("id:1")), "getPrimaryKeys of jdbc_items: " + otherKey);
    List<String> noKey = new ArrayList<>();
    try (ResultSet rs = meta.getPrimaryKeys(null, "public", "jdbc_prices")) {
      while (rs.next()) noKey.add(rs.getString("COLUMN_NAME"));
    }
    check(noKey.isEmpty(), "getPrimaryKeys of a view: " + noKey);
    // The same key as information_schema describes it.
    key = new ArrayList<>();
    try (ResultSet rs = connection.createStatement().executeQuery(
             "SELECT k.column_name, k.ordinal_position, k.constraint_name FROM information_schema.key_column_usage k "
             + "WHERE k.table_name = 'jdbc_pairs' ORDER BY k.ordinal_position")) {
      while (rs.next()) key.add(rs.getString(1) + ":" + rs.getInt(2) + ":" + rs.getString(3));
    }
    check(key.equals(List.of("c:1:jdbc_pairs_pkey", "a:2:jdbc_pairs_pkey")),
        "the primary key: " + key);
  }
}
