// libpqxx prepared statements against staved (the extended query protocol): statements
// prepared once and run with parameters, inside and outside a transaction. Run by
// extended_protocol_test.py with the server's port, and the password of the user stave when
// the server asks for one, as its arguments.

#include <cstdlib>
#include <iostream>
#include <pqxx/pqxx>
#include <stdexcept>
#include <string>

namespace {

void Check(bool condition, const std::string& message) {
  if (!condition) throw std::runtime_error("check failed: " + message);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    std::cerr << "usage: libpqxx_client PORT [PASSWORD]\n";
    return 2;
  }
  try {
    std::string options = "host=127.0.0.1 user=stave dbname=stave port=" + std::string(argv[1]);
    if (argc == 3) {
      // A wrong password is refused before anything else happens.
      try {
        pqxx::connection refused(options + " password=" + std::string(argv[2]) + "-wrong");
        Check(false, "a wrong password was accepted");
      } catch (const pqxx::broken_connection& error) {
        Check(std::string(error.what()).find("password authentication failed for user \"stave\"") !=
                  std::string::npos,
              error.what());
      }
      options += " password=" + std::string(argv[2]);
    }
    pqxx::connection connection(options);
    {
      pqxx::nontransaction ddl(connection);
      ddl.exec(
          "CREATE TABLE pqxx_items (id BIGINT PRIMARY KEY, name TEXT, price DOUBLE PRECISION)");
    }
    connection.prepare("insert_item", "INSERT INTO pqxx_items VALUES ($1, $2, $3)");
    connection.prepare("item_by_id", "SELECT name, price FROM pqxx_items WHERE id = $1");
    {
      pqxx::work work(connection);
      for (int i = 1; i <= 20; ++i) {
        pqxx::result result =
            work.exec_prepared("insert_item", i, "item " + std::to_string(i), i * 0.5);
        Check(result.affected_rows() == 1, "INSERT affects one row");
      }
      work.commit();
    }
    {
      pqxx::nontransaction read(connection);
      for (int i = 1; i <= 20; ++i) {
        pqxx::result result = read.exec_prepared("item_by_id", i);
        Check(result.size() == 1, "one row for id " + std::to_string(i));
        Check(result[0][0].as<std::string>() == "item " + std::to_string(i), "name");
        Check(result[0][1].as<double>() == i * 0.5, "price");
      }
      pqxx::result none = read.exec_prepared("item_by_id", 999);
      Check(none.empty(), "no row for an unknown id");
    }
    {
      pqxx::work work(connection);
      work.exec_prepared("insert_item", 100, "rolled back", 1.0);
      work.abort();
    }
    {
      pqxx::nontransaction read(connection);
      Check(read.exec_prepared("item_by_id", 100).empty(), "an aborted INSERT leaves nothing");
      try {
        read.exec_prepared("item_by_id", "x");
        Check(false, "a bad integer must fail");
      } catch (const pqxx::data_exception& error) {
        Check(std::string(error.what()).find("invalid input syntax for type bigint") !=
                  std::string::npos,
              error.what());
      }
    }
  } catch (const std::exception& error) {
    std::cerr << "libpqxx client failed: " << error.what() << "\n";
    return 1;
  }
  std::cout << "libpqxx: ok\n";
  return 0;
}
