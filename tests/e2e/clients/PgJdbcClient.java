// pgJDBC against staved: PreparedStatements with server-side parameters (the extended query
// protocol), binary results after prepareThreshold executions, batches, and a cursor with a
// fetch size inside a transaction. Run by extended_protocol_test.py with the server's port, and
// the password of the user stave when the server asks for one, as its arguments.

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.sql.Types;

public class PgJdbcClient {
  static void check(boolean condition, String message) {
    if (!condition) throw new AssertionError(message);
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
        check("28P01".equals(e.getSQLState()), "wrong password: " + e.getSQLState() + " " + e.getMessage());
      }
      login.setProperty("password", args[1]);
    }
    try (Connection connection = DriverManager.getConnection(url, login)) {
      try (Statement statement = connection.createStatement()) {
        statement.execute("CREATE TABLE jdbc_items (id BIGINT PRIMARY KEY, name TEXT, price DOUBLE PRECISION, "
            + "ok BOOLEAN, at TIMESTAMP, small SMALLINT, n INT)");
      }
      Timestamp at = Timestamp.valueOf("2024-01-31 12:30:15.25");

      // Batch inserts: many Bind/Execute pairs before one Sync.
      try (PreparedStatement insert = connection.prepareStatement(
               "INSERT INTO jdbc_items VALUES (?, ?, ?, ?, ?, ?, ?)")) {
        for (int i = 1; i <= 100; i++) {
          insert.setLong(1, i);
          insert.setString(2, "item " + i);
          insert.setDouble(3, i * 0.25);
          insert.setBoolean(4, i % 2 == 0);
          insert.setTimestamp(5, at);
          insert.setShort(6, (short) (i % 7));
          if (i == 100) insert.setNull(7, Types.INTEGER); else insert.setInt(7, i * 10);
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
            check(rs.getString(1).equals("item " + run), "name in run " + run + ": " + rs.getString(1));
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
      try (PreparedStatement scan = connection.prepareStatement(
               "SELECT id FROM jdbc_items WHERE id > ? ORDER BY id")) {
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
      try (PreparedStatement update = connection.prepareStatement(
               "UPDATE jdbc_items SET name = ? WHERE id = ?")) {
        update.setString(1, "changed");
        update.setLong(2, 1);
        check(update.executeUpdate() == 1, "UPDATE count");
      }
      connection.commit();
      connection.setAutoCommit(true);

      try (PreparedStatement select = connection.prepareStatement(
               "SELECT name FROM jdbc_items WHERE id = ?")) {
        select.setLong(1, 1);
        try (ResultSet rs = select.executeQuery()) {
          check(rs.next() && rs.getString(1).equals("changed"), "committed UPDATE");
        }
      }

      // An error carries its SQLSTATE and the connection goes on.
      try (PreparedStatement bad = connection.prepareStatement("SELECT nosuch FROM jdbc_items WHERE id = ?")) {
        bad.setLong(1, 1);
        bad.executeQuery();
        check(false, "an unknown column must fail");
      } catch (SQLException error) {
        check("42703".equals(error.getSQLState()), "SQLSTATE " + error.getSQLState());
      }
      try (PreparedStatement count = connection.prepareStatement("SELECT count(*) FROM jdbc_items WHERE id <= ?")) {
        count.setInt(1, 50);
        try (ResultSet rs = count.executeQuery()) {
          check(rs.next() && rs.getLong(1) == 50, "count after an error");
        }
      }
    }
    System.out.println("pgJDBC: ok");
  }
}
