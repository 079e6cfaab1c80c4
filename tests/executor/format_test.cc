#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "common/sql_error.h"
#include "common/temporal.h"
#include "common/value_cast.h"
#include "executor/connectors/format/json_decoder.h"
#include "executor/connectors/format/json_encoder.h"
#include "executor/connectors/format/record_decoder.h"

namespace stave::executor {
namespace {

// Whether `text` contains `part`, saying what the text was if not.
::testing::AssertionResult Contains(const std::string& text, std::string_view part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

// Column 0 stands for a metadata column (`_partition`) the source fills: the decoders must
// never touch it. The payload columns follow, at indexes 1..7.
std::vector<PayloadColumn> TestColumns() {
  return {{1, "id", TypeId::kInt64},      {2, "name", TypeId::kVarchar},
          {3, "price", TypeId::kFloat64}, {4, "ok", TypeId::kBoolean},
          {5, "small", TypeId::kInt16},   {6, "mid", TypeId::kInt32},
          {7, "ratio", TypeId::kFloat32}};
}

Chunk TestChunk(const std::vector<PayloadColumn>& columns) {
  std::vector<DataType> types(columns.size() + 1, TypeId::kInt32);
  for (const PayloadColumn& column : columns) types[column.index] = column.type;
  return Chunk::WithTypes(types);
}

void ExpectSameChunk(const Chunk& expected, const Chunk& actual) {
  ASSERT_EQ(expected.columns.size(), actual.columns.size());
  for (size_t i = 0; i < expected.columns.size(); ++i) {
    const Column& a = expected.columns[i];
    const Column& b = actual.columns[i];
    EXPECT_EQ(a.nulls, b.nulls) << "column " << i;
    EXPECT_EQ(a.ints, b.ints) << "column " << i;
    EXPECT_EQ(a.strings, b.strings) << "column " << i;
    ASSERT_EQ(a.doubles.size(), b.doubles.size()) << "column " << i;
    for (size_t r = 0; r < a.doubles.size(); ++r) {
      EXPECT_TRUE(a.doubles[r] == b.doubles[r] ||
                  (std::isnan(a.doubles[r]) && std::isnan(b.doubles[r])))
          << "column " << i << " row " << r;
    }
  }
  EXPECT_EQ(expected.ops, actual.ops);
}

struct Outcome {
  bool ok = false;
  std::string error;
  std::vector<Value> row;  ///< The payload columns' new values, in the columns' order.
};

// Decodes records into one chunk that grows across calls, checking the decoder's contract
// on every call: one value per payload column on success; on failure the chunk exactly as
// before and a one-line error of at most 200 bytes.
class Decoding {
 public:
  Decoding(std::string_view format, std::vector<PayloadColumn> columns = TestColumns(),
           const std::map<std::string, std::string>& options = {})
      : columns_(columns),
        chunk_(TestChunk(columns)),
        decoder_(MakeRecordDecoder(format, std::move(columns), options)) {}

  Outcome Decode(std::string_view payload) {
    // Copying the chunk for each record would make long tests quadratic.
    if (chunk_.size() >= 64) chunk_ = TestChunk(columns_);
    Chunk before = chunk_;
    Outcome outcome;
    outcome.error = "(not set)";
    outcome.ok = decoder_->Decode(payload, &chunk_, &outcome.error);
    if (!outcome.ok) {
      ExpectSameChunk(before, chunk_);
      EXPECT_FALSE(outcome.error.empty());
      EXPECT_LE(outcome.error.size(), 200u) << outcome.error;
      EXPECT_EQ(outcome.error.find_first_of("\r\n"), std::string::npos) << outcome.error;
      return outcome;
    }
    size_t row = before.size();
    EXPECT_EQ(chunk_.columns[0].size(), row) << "the metadata column was touched";
    for (const PayloadColumn& column : columns_) {
      EXPECT_EQ(chunk_.columns[column.index].size(), row + 1) << column.name;
      outcome.row.push_back(chunk_.columns[column.index].GetValue(row));
    }
    // Complete the row as a source would.
    chunk_.columns[0].AppendInt(7);
    chunk_.ops.push_back(RowOp::kInsert);
    return outcome;
  }

  // The error for a record that must be refused.
  std::string ErrorOf(std::string_view payload) {
    Outcome outcome = Decode(payload);
    EXPECT_FALSE(outcome.ok) << "accepted: " << payload;
    return outcome.error;
  }

  // The values of a record that must be accepted.
  std::vector<Value> RowOf(std::string_view payload) {
    Outcome outcome = Decode(payload);
    EXPECT_TRUE(outcome.ok) << payload << ": " << outcome.error;
    return outcome.row;
  }

  const Chunk& chunk() const { return chunk_; }

 private:
  std::vector<PayloadColumn> columns_;
  Chunk chunk_;
  std::unique_ptr<RecordDecoder> decoder_;
};

std::vector<Value> NullRow(size_t columns = 7) { return std::vector<Value>(columns); }

std::string Repeat(std::string_view text, int times) {
  std::string repeated;
  for (int i = 0; i < times; ++i) repeated += text;
  return repeated;
}

// ---------------------------------------------------------------------------------------
// JSON

TEST(FormatJsonTest, DecodesEveryType) {
  Decoding json("json");
  auto row = json.RowOf(
      R"({"id":123,"name":"user-1","price":12.5,"ok":true,"small":-32768,"mid":2147483647,)"
      R"("ratio":0.1})");
  EXPECT_EQ(row,
            (std::vector<Value>{Value::Int(123), Value::String("user-1"), Value::Double(12.5),
                                Value::Boolean(true), Value::Int(-32768), Value::Int(2147483647),
                                Value::Double(static_cast<float>(0.1))}));
  row = json.RowOf(R"( {"ok" : false , "id" : -9223372036854775808, "price": -1.5e-3} )");
  EXPECT_EQ(row[0], Value::Int(std::numeric_limits<int64_t>::min()));
  EXPECT_EQ(row[2], Value::Double(-1.5e-3));
  EXPECT_EQ(row[3], Value::Boolean(false));
  EXPECT_EQ(json.chunk().size(), 2u);
}

TEST(FormatJsonTest, MissingFieldsAndNullAreNullAndUnknownFieldsAreIgnored) {
  Decoding json("json");
  EXPECT_EQ(json.RowOf("{}"), NullRow());
  EXPECT_EQ(json.RowOf(R"({"id":null,"name":null,"price":null,"ok":null,"small":null,)"
                       R"("mid":null,"ratio":null})"),
            NullRow());
  auto row = json.RowOf(R"({"other":{"id":5,"deep":[1,{"x":null}]},"id":6,"more":[],"ID":7})");
  EXPECT_EQ(row[0], Value::Int(6)) << "nested and differently cased names must not match";
  EXPECT_EQ(row[1], Value());
  // Fields in any order.
  row = json.RowOf(R"({"ratio":2,"mid":1,"name":"n","id":9})");
  EXPECT_EQ(row[0], Value::Int(9));
  EXPECT_EQ(row[1], Value::String("n"));
  EXPECT_EQ(row[5], Value::Int(1));
  EXPECT_EQ(row[6], Value::Double(2));
  // Names are compared after unescaping.
  EXPECT_EQ(json.RowOf(R"({"\u0069d":5})")[0], Value::Int(5));
}

TEST(FormatJsonTest, NamesThatJsonMustEscapeMatchOnlyTheirOwnKey) {
  // Keys are compared as written when they can be; a name with a quote must still match its
  // escaped key, and must not match the raw bytes of other fields.
  Decoding json("json", {{1, "a\":1,\"b", TypeId::kInt64},
                         {2, "tab\there", TypeId::kInt64},
                         {3, "a", TypeId::kInt64}});
  EXPECT_EQ(json.RowOf(R"({"a":1,"b":2})"), (std::vector<Value>{Value(), Value(), Value::Int(1)}));
  EXPECT_EQ(json.RowOf(R"({"a\":1,\"b":7,"tab\there":8})"),
            (std::vector<Value>{Value::Int(7), Value::Int(8), Value()}));
  EXPECT_EQ(json.RowOf(R"({"tab\u0009here":9,"\u0061":3})"),
            (std::vector<Value>{Value(), Value::Int(9), Value::Int(3)}));
}

TEST(FormatJsonTest, RepeatedFieldLastOneWins) {
  Decoding json("json");
  EXPECT_EQ(json.RowOf(R"({"id":1,"name":"a","id":2})")[0], Value::Int(2));
  EXPECT_EQ(json.RowOf(R"({"id":1,"id":null})")[0], Value());
  EXPECT_EQ(json.RowOf(R"({"name":"a","name":"b","name":"c"})")[1], Value::String("c"));
  // A bad repeat refuses the record and leaves the chunk as it was.
  EXPECT_EQ(json.ErrorOf(R"({"name":"a","id":1,"id":"x"})"),
            R"(field "id": expected a bigint, got the string "x")");
}

TEST(FormatJsonTest, IntegersAreStrict) {
  Decoding json("json");
  EXPECT_EQ(json.RowOf(R"({"id":9223372036854775807})")[0],
            Value::Int(std::numeric_limits<int64_t>::max()));
  EXPECT_EQ(json.RowOf(R"({"id":-0})")[0], Value::Int(0));
  EXPECT_EQ(json.RowOf(R"({"small":32767,"mid":-2147483648})")[4], Value::Int(32767));
  EXPECT_EQ(json.ErrorOf(R"({"id":3.5})"), R"(field "id": expected a bigint, got the number 3.5)");
  EXPECT_EQ(json.ErrorOf(R"({"id":1e2})"), R"(field "id": expected a bigint, got the number 1e2)");
  EXPECT_EQ(json.ErrorOf(R"({"id":1.0})"), R"(field "id": expected a bigint, got the number 1.0)");
  EXPECT_EQ(json.ErrorOf(R"({"id":"5"})"), R"(field "id": expected a bigint, got the string "5")");
  EXPECT_EQ(json.ErrorOf(R"({"id":true})"), R"(field "id": expected a bigint, got true)");
  EXPECT_EQ(json.ErrorOf(R"({"id":{}})"), R"(field "id": expected a bigint, got an object)");
  EXPECT_EQ(json.ErrorOf(R"({"id":[1]})"), R"(field "id": expected a bigint, got an array)");
  EXPECT_EQ(json.ErrorOf(R"({"id":9223372036854775808})"),
            R"(field "id": 9223372036854775808 is out of range for type bigint)");
  EXPECT_TRUE(Contains(json.ErrorOf(R"({"id":-9223372036854775809})"), "out of range"));
  EXPECT_EQ(json.ErrorOf(R"({"small":32768})"),
            R"(field "small": 32768 is out of range for type smallint)");
  EXPECT_EQ(json.ErrorOf(R"({"small":-32769})"),
            R"(field "small": -32769 is out of range for type smallint)");
  EXPECT_EQ(json.ErrorOf(R"({"mid":2147483648})"),
            R"(field "mid": 2147483648 is out of range for type integer)");
  EXPECT_EQ(json.ErrorOf(R"({"mid":-2147483649})"),
            R"(field "mid": -2147483649 is out of range for type integer)");
  std::string huge(400, '9');
  EXPECT_TRUE(Contains(json.ErrorOf(R"({"id":)" + huge + "}"), "out of range for type bigint"));
}

TEST(FormatJsonTest, FloatsTakeAnyNumberInRange) {
  Decoding json("json");
  auto row = json.RowOf(R"({"price":12,"ratio":-3})");
  EXPECT_EQ(row[2], Value::Double(12));
  EXPECT_EQ(row[6], Value::Double(-3));
  EXPECT_EQ(json.RowOf(R"({"price":1.7976931348623157e308})")[2],
            Value::Double(std::numeric_limits<double>::max()));
  EXPECT_EQ(json.RowOf(R"({"price":5e-324})")[2], Value::Double(5e-324));
  EXPECT_EQ(json.RowOf(R"({"price":123456789012345678901234567890})")[2],
            Value::Double(123456789012345678901234567890.0));
  EXPECT_EQ(json.RowOf(R"({"ratio":3.4028234e38})")[6],
            Value::Double(std::numeric_limits<float>::max()));
  EXPECT_EQ(json.ErrorOf(R"({"price":1e400})"),
            R"(field "price": 1e400 is out of range for type double precision)");
  EXPECT_EQ(json.ErrorOf(R"({"ratio":1e39})"),
            R"(field "ratio": 1e39 is out of range for type real)");
  EXPECT_EQ(json.ErrorOf(R"({"price":"1.5"})"),
            R"(field "price": expected a double precision, got the string "1.5")");
  EXPECT_EQ(json.ErrorOf(R"({"price":false})"),
            R"(field "price": expected a double precision, got false)");
  // The strings the encoder writes for NaN and the infinities, exactly so spelled.
  EXPECT_TRUE(std::isnan(json.RowOf(R"({"price":"NaN"})")[2].double_value()));
  EXPECT_EQ(json.RowOf(R"({"price":"Infinity","ratio":"-Infinity"})")[6],
            Value::Double(-std::numeric_limits<double>::infinity()));
  EXPECT_TRUE(Contains(json.ErrorOf(R"({"price":"nan"})"), "got the string \"nan\""));
  EXPECT_TRUE(Contains(json.ErrorOf(R"({"price":"inf"})"), "got the string \"inf\""));
}

TEST(FormatJsonTest, BooleansAreStrict) {
  Decoding json("json");
  EXPECT_EQ(json.RowOf(R"({"ok":true})")[3], Value::Boolean(true));
  EXPECT_EQ(json.RowOf(R"({"ok":false})")[3], Value::Boolean(false));
  EXPECT_EQ(json.ErrorOf(R"({"ok":1})"), R"(field "ok": expected a boolean, got the number 1)");
  EXPECT_EQ(json.ErrorOf(R"({"ok":"true"})"),
            R"(field "ok": expected a boolean, got the string "true")");
}

TEST(FormatJsonTest, VarcharTakesStringsAndTheTextOfOtherValues) {
  Decoding json("json");
  EXPECT_EQ(json.RowOf(R"({"name":"a\"b\\c\/d\n\t\u00e9\ud83d\ude00"})")[1],
            Value::String("a\"b\\c/d\n\t\xC3\xA9\xF0\x9F\x98\x80"));
  EXPECT_EQ(json.RowOf(R"({"name":""})")[1], Value::String(""));
  EXPECT_EQ(json.RowOf(R"({"name":"\u0000"})")[1], Value::String(std::string(1, '\0')));
  EXPECT_EQ(json.RowOf(R"({"name":1.50})")[1], Value::String("1.50"));
  EXPECT_EQ(json.RowOf(R"({"name":-12 , "id":1})")[1], Value::String("-12"));
  EXPECT_EQ(json.RowOf(R"({"name":true})")[1], Value::String("true"));
  EXPECT_EQ(json.RowOf(R"({"name":false})")[1], Value::String("false"));
  EXPECT_EQ(json.RowOf(R"({"name":null})")[1], Value());
  EXPECT_EQ(json.RowOf(R"({"name": {"a": [1, 2], "b" : "}"}  , "id":1})")[1],
            Value::String(R"({"a": [1, 2], "b" : "}"})"));
  EXPECT_EQ(json.RowOf(R"({"name":[1,[2,{}]]})")[1], Value::String("[1,[2,{}]]"));
  EXPECT_EQ(json.RowOf("{\"name\":[]\n}")[1], Value::String("[]"));
  std::string digits(400, '7');
  EXPECT_EQ(json.RowOf(R"({"name":)" + digits + "e999}")[1], Value::String(digits + "e999"));
  std::string long_text(1 << 20, 'x');
  EXPECT_EQ(json.RowOf(R"({"name":")" + long_text + "\"}")[1], Value::String(long_text));
}

TEST(FormatJsonTest, RefusesMalformedRecordsWithoutTouchingTheChunk) {
  Decoding json("json");
  ASSERT_TRUE(json.Decode(R"({"id":1,"name":"first"})").ok);
  const std::vector<std::string> bad = {
      "",
      "   \n",
      "{",
      "}",
      R"({"id":1)",
      R"({"id":1,})",
      R"({"id":1 "name":"x"})",
      R"({"id":})",
      R"({"id"1})",
      R"({"id":1,,"name":"x"})",
      R"({id:1})",
      R"({'id':1})",
      R"({"id":1}})",
      R"({"id":1}{})",
      R"({"id":1} x)",
      R"({"id":1} {)",
      R"({"id":1}])",
      R"({"name":"abc})",
      R"({"name":"\x"})",
      R"({"name":"\u12"})",
      R"({"name":"\ud800"})",
      R"({"name":"\udc00"})",
      R"({"name":"\ud800\u0041"})",
      R"({"x":"\ud800"})",
      R"({"\ud800":1})",
      "{\"name\":\"\xff\"}",
      "{\"x\":\"\xc0\xaf\"}",
      "{\"\xed\xa0\x80\":1}",
      "{\"name\":\"a\x01z\"}",
      "{\"x\":\"a\nz\"}",
      std::string("{\"id\":1\0}", 9),
      R"({"id":01})",
      R"({"id":-})",
      R"({"id":1.})",
      R"({"id":.5})",
      R"({"id":+1})",
      R"({"id":0x10})",
      R"({"id":1e})",
      R"({"id":12abc})",
      R"({"price":NaN})",
      R"({"price":Infinity})",
      R"({"price":-Infinity})",
      R"({"name":01})",
      R"({"name":tru})",
      R"({"name":nul})",
      R"({"ok":tru})",
      R"({"ok":truex})",
      R"({"id":nul})",
      R"({"id":nullx})",
      R"({"x":[1 2]})",
      R"({"x":[1,]})",
      R"({"x":[,1]})",
      R"({"x":{"a"}})",
      R"({"x":{"a":1,}})",
      R"({"x":[})",
      R"({"x":{]})",
      R"({"x":01})",
      R"({"x":1.e5})",
      R"({"x":undefined})",
      R"({"name":[1 2]})",
      R"({"name":{"a":}})",
      R"({"id":[1 2]})",
      R"([{"id":1}])",
      R"("{\"id\":1}")",
      "42",
      "null",
      "true",
      "\xef\xbb\xbf{\"id\":1}",  // A byte order mark is not JSON (RFC 8259 section 8.1).
  };
  for (const std::string& payload : bad) {
    SCOPED_TRACE(payload);
    json.ErrorOf(payload);
  }
  EXPECT_EQ(json.chunk().size(), 1u);
}

TEST(FormatJsonTest, ErrorsSayWhatWasWrong) {
  Decoding json("json");
  EXPECT_EQ(json.ErrorOf(""), "empty record");
  EXPECT_EQ(json.ErrorOf("[1]"), "the record is not a JSON object");
  EXPECT_EQ(json.ErrorOf(R"({"id":1} {})"), "malformed JSON at offset 9: content after the object");
  EXPECT_TRUE(Contains(json.ErrorOf(R"({"id":1 "name":2})"), "malformed JSON"));
  EXPECT_TRUE(Contains(json.ErrorOf(R"({"name":"\ud800"})"),
                       R"(field "name": malformed JSON at offset 8: bad escape)"));
  EXPECT_TRUE(Contains(json.ErrorOf(R"({"x":[1 2]})"), R"(field "x": malformed JSON)"));
  EXPECT_TRUE(Contains(json.ErrorOf(R"({"id":01})"),
                       R"(field "id": malformed JSON at offset 6: malformed number)"));
  EXPECT_TRUE(Contains(json.ErrorOf("{\"name\":\"\xff\"}"), "invalid UTF-8"));
  // Long and hostile texts are cut and escaped, keeping the error one short line.
  std::string long_name = "x\n\t" + std::string(300, 'n');
  Decoding hostile("json", {{1, long_name, TypeId::kInt64}});
  std::string key = "x\\n\\t" + std::string(300, 'n');
  EXPECT_EQ(hostile.ErrorOf("{\"" + key + "\":\"" + std::string(300, 'v') + "\"}"),
            "field \"x\\n\\t" + std::string(43, 'n') +
                "\"...: expected a bigint, got the string \"" + std::string(48, 'v') + "\"...");
  EXPECT_EQ(hostile.ErrorOf("{\"" + key + "\":\"\\n\\u0001\\u00e9\\\"\"}"),
            "field \"x\\n\\t" + std::string(43, 'n') +
                "\"...: expected a bigint, got the string \"\\n\\x01\xC3\xA9\\\"\"");
  // Escapes count against the length: 16 control characters fill the 48 bytes quoted.
  std::string controls;
  for (int i = 0; i < 300; ++i) controls += "\\u0001";
  EXPECT_EQ(hostile.ErrorOf("{\"" + key + "\":\"" + controls + "\"}"),
            "field \"x\\n\\t" + std::string(43, 'n') +
                "\"...: expected a bigint, got the string \"" + Repeat("\\x01", 12) + "\"...");
  EXPECT_EQ(hostile.ErrorOf("{\"" + key + "\":" + std::string(300, '9') + "}"),
            "field \"x\\n\\t" + std::string(43, 'n') + "\"...: " + std::string(48, '9') +
                "... is out of range for type bigint");
}

TEST(FormatJsonTest, EveryTruncationOfARecordIsRefused) {
  const std::string record =
      R"({"id":123,"name":"caf\u00e9 \"x\"","other":{"a":[1,2.5e3,"}"],"b":null},)"
      R"("price":12.5,"ok":true,"ratio":-0.25})";
  Decoding json("json");
  ASSERT_TRUE(json.Decode(record).ok);
  for (size_t length = 0; length < record.size(); ++length) {
    SCOPED_TRACE(length);
    json.ErrorOf(record.substr(0, length));
  }
}

TEST(FormatJsonTest, ACutShortRecordIsNotCompletedByAnEarlierOne) {
  // The padded buffer is reused: a cut short record must not be completed by the bytes a
  // longer one left after its end.
  Decoding json("json");
  ASSERT_TRUE(json.Decode(R"({"x":{}})").ok);
  json.ErrorOf(R"({"x":{})");
  ASSERT_TRUE(json.Decode(R"({"id":12,"name":"abc"})").ok);
  json.ErrorOf(R"({"id":12,"name":"abc")");
  json.ErrorOf(R"({"id":12,)");
  json.ErrorOf(R"({"id":1)");
}

std::string Nested(size_t depth, std::string_view open, std::string_view inner,
                   std::string_view close) {
  std::string text;
  for (size_t i = 0; i < depth; ++i) text += open;
  text += inner;
  for (size_t i = 0; i < depth; ++i) text += close;
  return text;
}

TEST(FormatJsonTest, DeepNestingIsRefusedNotACrash) {
  Decoding json("json");
  // The record is depth 1, so kMaxJsonDepth - 1 arrays fit inside it.
  size_t fits = kMaxJsonDepth - 1;
  EXPECT_TRUE(json.Decode(R"({"x":)" + Nested(fits, "[", "1", "]") + "}").ok);
  EXPECT_TRUE(json.Decode(R"({"x":)" + Nested(fits, R"({"a":)", "1", "}") + "}").ok);
  auto row = json.RowOf(R"({"name":)" + Nested(fits, "[", "", "]") + "}");
  EXPECT_EQ(row[1].string_value().size(), 2 * fits);
  EXPECT_TRUE(Contains(json.ErrorOf(R"({"x":)" + Nested(fits + 1, "[", "1", "]") + "}"),
                       "nested too deep"));
  EXPECT_TRUE(Contains(json.ErrorOf(R"({"name":)" + Nested(fits + 1, "[", "", "]") + "}"),
                       "nested too deep"));
  json.ErrorOf(R"({"id":)" + Nested(fits + 1, "[", "", "]") + "}");
  for (const char* open : {"[", "{\"a\":"}) {
    json.ErrorOf(R"({"x":)" + Nested(1'000'000, open, "", "") + "}");
    json.ErrorOf(R"({"name":)" + Nested(1'000'000, open, "", "") + "}");
    json.ErrorOf(Nested(1'000'000, "[", "", "]"));
  }
  json.ErrorOf(R"({"x":)" + Nested(1'000'000, "[", "", "]") + "}");
  json.ErrorOf(R"({"x":)" + std::string(1'000'000, ']') + "}");
}

TEST(FormatJsonTest, BinaryGarbageIsRefused) {
  Decoding json("json");
  std::mt19937 random(42);
  for (int i = 0; i < 2000; ++i) {
    std::string payload(random() % 200, '\0');
    for (char& c : payload) c = static_cast<char>(random());
    if (i % 2 == 0) payload = "{\"name\":" + payload;
    Outcome outcome = json.Decode(payload);  // Decoding checks the chunk on failure.
    EXPECT_FALSE(outcome.ok) << i;
  }
}

// Mutated records against nlohmann::json, a separate strict parser: with only varchar
// columns (which take any value) a record must decode exactly when it is a valid JSON
// object; with typed columns, never when it is not.
TEST(FormatJsonTest, AgreesWithAStrictParserOnMutatedRecords) {
  const std::vector<std::string> corpus = {
      R"({"id":123,"name":"user-000123","price":12.5,"ok":true})",
      R"({"a":[1,-2.5e-3,{"b":null,"c":[true,false]}],"id":"x\n\u00e9\ud83d\ude00"})",
      R"({ "name" : "s\"q\\" , "x" : { } , "y" : [ ] , "z" : 0 })",
      R"({"id":-0,"ok":false,"price":1E+2,"deep":[[[[["v"]]]]]})",
  };
  const std::string alphabet = "{}[]:,\"\\ \n\t0123456789.-+eEtrufalsn\x01\x7f\xc3\xa9\xff\xed";
  std::vector<PayloadColumn> text_columns = {{1, "id", TypeId::kVarchar},
                                             {2, "name", TypeId::kVarchar},
                                             {3, "a", TypeId::kVarchar},
                                             {4, "deep", TypeId::kVarchar}};
  Decoding text("json", text_columns);
  Decoding typed("json");
  std::mt19937 random(7);
  int accepted = 0;
  int refused = 0;
  for (int i = 0; i < 30000; ++i) {
    std::string payload = corpus[random() % corpus.size()];
    int mutations = 1 + static_cast<int>(random() % 3);
    for (int m = 0; m < mutations && !payload.empty(); ++m) {
      size_t at = random() % payload.size();
      char c = alphabet[random() % alphabet.size()];
      switch (random() % 4) {
        case 0:
          payload[at] = c;
          break;
        case 1:
          payload.insert(payload.begin() + static_cast<std::ptrdiff_t>(at), c);
          break;
        case 2:
          payload.erase(at, 1 + random() % 3);
          break;
        default:
          payload.insert(at, payload.substr(random() % payload.size(), random() % 8));
          break;
      }
    }
    bool valid = false;
    try {
      valid = nlohmann::json::parse(payload).is_object();
    } catch (const nlohmann::json::exception&) {
    }
    Outcome as_text = text.Decode(payload);
    EXPECT_EQ(as_text.ok, valid) << payload << "\n" << as_text.error;
    if (typed.Decode(payload).ok) {
      EXPECT_TRUE(valid) << payload;
    }
    (valid ? accepted : refused)++;
  }
  // The mutations must produce both kinds, or the test proves little.
  EXPECT_GT(accepted, 1000);
  EXPECT_GT(refused, 10000);
}

// ---------------------------------------------------------------------------------------
// CSV

TEST(FormatCsvTest, DecodesEveryTypeInColumnOrder) {
  Decoding csv("csv");
  EXPECT_EQ(csv.RowOf("123,user-1,12.5,true,-32768,2147483647,0.1"),
            (std::vector<Value>{Value::Int(123), Value::String("user-1"), Value::Double(12.5),
                                Value::Boolean(true), Value::Int(-32768), Value::Int(2147483647),
                                Value::Double(static_cast<float>(0.1))}));
  auto row = csv.RowOf("-9223372036854775808, spaced ,-1e-3,F,+5,-2147483648,3");
  EXPECT_EQ(row[0], Value::Int(std::numeric_limits<int64_t>::min()));
  EXPECT_EQ(row[1], Value::String(" spaced "));
  EXPECT_EQ(row[2], Value::Double(-1e-3));
  EXPECT_EQ(row[3], Value::Boolean(false));
  EXPECT_EQ(row[4], Value::Int(5));
}

TEST(FormatCsvTest, QuotedFieldsAndNulls) {
  Decoding csv("csv");
  auto row = csv.RowOf("\"12\",\"a,b \"\"q\"\"\nline\",\"1.5\",\"t\",,,");
  EXPECT_EQ(row[0], Value::Int(12));
  EXPECT_EQ(row[1], Value::String("a,b \"q\"\nline"));
  EXPECT_EQ(row[2], Value::Double(1.5));
  EXPECT_EQ(row[3], Value::Boolean(true));
  EXPECT_EQ(row[4], Value());
  EXPECT_EQ(row[5], Value());
  EXPECT_EQ(csv.ErrorOf(",,,,,,\"\"\"\""), "field \"ratio\": expected a real, got \"\\\"\"");
  EXPECT_EQ(csv.RowOf(",,,,,,"), NullRow());
  // Quoted empty is the empty string, not NULL; for other types it is not a value.
  EXPECT_EQ(csv.RowOf(",\"\",,,,,")[1], Value::String(""));
  EXPECT_EQ(csv.ErrorOf("\"\",,,,,,"), R"(field "id": expected a bigint, got "")");
  EXPECT_EQ(csv.RowOf(",\"x\"\"\",,,,,")[1], Value::String("x\""));
  EXPECT_EQ(csv.RowOf(",\"\"\"\"\"\",,,,,")[1], Value::String("\"\""));
}

TEST(FormatCsvTest, TrailingLineBreakIsIgnoredOnce) {
  Decoding csv("csv");
  EXPECT_EQ(csv.RowOf("1,a,,,,,\n")[1], Value::String("a"));
  EXPECT_EQ(csv.RowOf("1,a,,,,,\r\n")[1], Value::String("a"));
  EXPECT_EQ(csv.RowOf("1,\"a\n\",,,,,\n")[1], Value::String("a\n"));
  EXPECT_TRUE(Contains(csv.ErrorOf("1,a,,,,,\n\n"), "a line break inside an unquoted field"));
  EXPECT_TRUE(Contains(csv.ErrorOf("1,a\r,,,,,"), "field 2: a line break"));
  EXPECT_TRUE(Contains(csv.ErrorOf("1,a,,,\n,,"), "line break"));
  EXPECT_EQ(csv.ErrorOf("1,a,,,,\n"), "expected 7 fields, got 6");
}

TEST(FormatCsvTest, RefusesBadRecordsWithoutTouchingTheChunk) {
  Decoding csv("csv");
  ASSERT_TRUE(csv.Decode("1,first,,,,,").ok);
  EXPECT_EQ(csv.ErrorOf("1,a,2.5,true,1,2"), "expected 7 fields, got 6");
  EXPECT_EQ(csv.ErrorOf("1,a,2.5,true,1,2,3,4"), "expected 7 fields, got 8");
  EXPECT_EQ(csv.ErrorOf(""), "expected 7 fields, got 1");
  EXPECT_EQ(csv.ErrorOf("1,\"a,,,,,"), "field 2: unterminated quoted field");
  EXPECT_EQ(csv.ErrorOf("1,\"a\"b,,,,,"),
            "field 2: a quoted field must end at a delimiter or the end of the record");
  EXPECT_EQ(csv.ErrorOf("1,a\"b,,,,,"), "field 2: a double quote inside an unquoted field");
  // A bad value late in the record: the earlier columns' values are taken back.
  EXPECT_EQ(csv.ErrorOf("1,a,2.5,true,1,2,x"), R"(field "ratio": expected a real, got "x")");
  EXPECT_EQ(csv.chunk().size(), 1u);
}

TEST(FormatCsvTest, ParsesTextStrictlyIntoTheColumnType) {
  Decoding csv("csv");
  auto id = [&](std::string_view text) { return std::string(text) + ",,,,,,"; };
  EXPECT_EQ(csv.RowOf(id("9223372036854775807"))[0],
            Value::Int(std::numeric_limits<int64_t>::max()));
  EXPECT_EQ(csv.ErrorOf(id("9223372036854775808")),
            R"(field "id": "9223372036854775808" is out of range for type bigint)");
  for (std::string_view bad :
       {"12abc", " 12", "12 ", "1.0", "0x10", "+-1", "++1", "-", "+", "1e3"}) {
    EXPECT_EQ(csv.ErrorOf(id(bad)),
              R"(field "id": expected a bigint, got ")" + std::string(bad) + "\"");
  }
  EXPECT_EQ(csv.ErrorOf(",,,,32768,,"),
            R"(field "small": "32768" is out of range for type smallint)");
  EXPECT_EQ(csv.ErrorOf(",,,,,2147483648,"),
            R"(field "mid": "2147483648" is out of range for type integer)");
  EXPECT_EQ(csv.ErrorOf(",,1e400,,,,"),
            R"(field "price": "1e400" is out of range for type double precision)");
  EXPECT_EQ(csv.ErrorOf(",,,,,,1e39"), R"(field "ratio": "1e39" is out of range for type real)");
  EXPECT_EQ(csv.ErrorOf(",,1.5x,,,,"), R"(field "price": expected a double precision, got "1.5x")");
  EXPECT_EQ(csv.RowOf(",,inf,,,,-INF")[2], Value::Double(std::numeric_limits<double>::infinity()));
  EXPECT_TRUE(std::isnan(csv.RowOf(",,nan,,,,")[2].double_value()));
  EXPECT_EQ(csv.RowOf(",,+2.5e1,,,,")[2], Value::Double(25));
  for (std::string_view yes : {"true", "TRUE", "True", "t", "T", "1"}) {
    EXPECT_EQ(csv.RowOf(",,," + std::string(yes) + ",,,")[3], Value::Boolean(true)) << yes;
  }
  for (std::string_view no : {"false", "FALSE", "f", "F", "0"}) {
    EXPECT_EQ(csv.RowOf(",,," + std::string(no) + ",,,")[3], Value::Boolean(false)) << no;
  }
  for (std::string_view bad : {"yes", "no", "2", "tru", " true"}) {
    EXPECT_EQ(csv.ErrorOf(",,," + std::string(bad) + ",,,"),
              R"(field "ok": expected a boolean, got ")" + std::string(bad) + "\"");
  }
}

TEST(FormatCsvTest, DelimiterOption) {
  Decoding semicolon("csv", TestColumns(), {{"csv.delimiter", ";"}});
  auto row = semicolon.RowOf("1;a,b;2.5;t;;;");
  EXPECT_EQ(row[1], Value::String("a,b"));
  EXPECT_EQ(row[2], Value::Double(2.5));
  Decoding tab("csv", TestColumns(), {{"csv.delimiter", "\\t"}});
  EXPECT_EQ(tab.RowOf("1\t\"a\tb\"\t\t\t\t\t")[1], Value::String("a\tb"));
  Decoding real_tab("csv", TestColumns(), {{"csv.delimiter", "\t"}});
  EXPECT_EQ(real_tab.RowOf("1\ta,b\t\t\t\t\t")[1], Value::String("a,b"));
}

TEST(FormatCsvTest, NeverCrashesOnGarbage) {
  Decoding csv("csv",
               {{1, "a", TypeId::kVarchar}, {2, "b", TypeId::kVarchar}, {3, "c", TypeId::kInt64}});
  Decoding typed("csv");
  std::mt19937 random(3);
  const std::string alphabet = ",\"\r\n abc019.-+eE\xff\x01";
  int accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string payload(random() % 40, ' ');
    for (char& c : payload) c = alphabet[random() % alphabet.size()];
    if (csv.Decode(payload).ok) ++accepted;  // Decoding checks the contract either way.
    typed.Decode(payload);
  }
  EXPECT_GT(accepted, 0);
}

// ---------------------------------------------------------------------------------------
// FORMAT BYTES

TEST(BytesFormatTest, TheValueLandsUnchangedInTheByteaColumn) {
  std::vector<PayloadColumn> columns = {{1, "payload", TypeId::kBytea}};
  Decoding bytes("BYTES", columns);
  std::string binary("\x00\xff{\"a\": 1}\n", 10);
  for (std::string_view payload :
       {std::string_view(binary), std::string_view(""), std::string_view("not json, not csv")}) {
    Outcome outcome = bytes.Decode(payload);
    ASSERT_TRUE(outcome.ok);
    EXPECT_EQ(outcome.row, (std::vector<Value>{Value::String(std::string(payload))}));
  }
}

TEST(BytesFormatTest, NeedsExactlyOneByteaColumnAndNoOptions) {
  auto error_of = [](std::vector<PayloadColumn> columns,
                     std::map<std::string, std::string> options) {
    try {
      MakeRecordDecoder("bytes", std::move(columns), options);
    } catch (const SqlError& error) {
      return error.sqlstate() + ": " + error.what();
    }
    return std::string("no error");
  };
  EXPECT_EQ(error_of({{1, "v", TypeId::kVarchar}}, {}),
            "42P16: FORMAT BYTES needs exactly one column besides the metadata columns, of type "
            "bytea (column \"v\" is of type character varying)");
  EXPECT_EQ(error_of({{1, "a", TypeId::kBytea}, {2, "b", TypeId::kBytea}}, {}),
            "42P16: FORMAT BYTES needs exactly one column besides the metadata columns, of type "
            "bytea (it has 2)");
  EXPECT_EQ(error_of({{1, "v", TypeId::kBytea}}, {{"bytes.x", "1"}}),
            "22023: unknown format option 'bytes.x': FORMAT BYTES takes no options");
}

// ---------------------------------------------------------------------------------------
// The factory

TEST(FormatFactoryTest, RefusesUnknownFormatsAndOptions) {
  auto sqlstate_of = [](std::string_view format, std::map<std::string, std::string> options) {
    try {
      MakeRecordDecoder(format, TestColumns(), options);
    } catch (const SqlError& error) {
      return error.sqlstate() + ": " + error.what();
    }
    return std::string("no error");
  };
  EXPECT_EQ(sqlstate_of("JSON", {}), "no error");
  EXPECT_EQ(sqlstate_of("Csv", {}), "no error");
  EXPECT_EQ(sqlstate_of("avro", {}), "22023: unknown format 'avro' (known: JSON, CSV, BYTES)");
  EXPECT_EQ(sqlstate_of("bytes", {}),
            "42P16: FORMAT BYTES needs exactly one column besides the metadata columns, of type "
            "bytea (it has 7)");
  EXPECT_EQ(sqlstate_of("json", {{"json.fail-on-missing-field", "true"}}),
            "22023: unknown format option 'json.fail-on-missing-field': FORMAT JSON takes no "
            "options");
  EXPECT_EQ(sqlstate_of("csv", {{"csv.quote", "'"}}),
            "22023: unknown format option 'csv.quote' for FORMAT CSV (known: csv.delimiter)");
  for (std::string bad : {"", ";;", "\"", "\n", "\r", "\xc2\xa7"}) {
    EXPECT_TRUE(Contains(sqlstate_of("csv", {{"csv.delimiter", bad}}),
                         "22023: format option 'csv.delimiter' must be one ASCII character"))
        << bad;
  }
  std::vector<PayloadColumn> untyped = {{0, "x", TypeId::kUnknown}};
  EXPECT_THROW(MakeRecordDecoder("json", untyped, {}), SqlError);
}

// ---------------------------------------------------------------------------------------
// The encoder

std::string Encode(const Chunk& chunk, size_t row, const std::vector<std::string>& names) {
  std::vector<size_t> columns;
  for (size_t i = 0; i < names.size(); ++i) columns.push_back(i);
  std::string out = "prefix:";
  JsonObjectEncoder(columns, names).Append(chunk, row, &out);
  EXPECT_EQ(out.substr(0, 7), "prefix:") << "must append, not replace";
  return out.substr(7);
}

TEST(FormatJsonEncoderTest, WritesEveryType) {
  Chunk chunk = Chunk::WithTypes({TypeId::kBoolean, TypeId::kInt16, TypeId::kInt32, TypeId::kInt64,
                                  TypeId::kFloat32, TypeId::kFloat64, TypeId::kVarchar});
  chunk.AppendRow({Value::Boolean(true), Value::Int(-5), Value::Int(70000),
                   Value::Int(std::numeric_limits<int64_t>::min()),
                   Value::Double(static_cast<float>(0.1)), Value::Double(0.1), Value::String("x")},
                  RowOp::kInsert);
  chunk.AppendRow(std::vector<Value>(7), RowOp::kInsert);
  std::vector<std::string> names = {"b", "s", "i", "l", "f", "d", "v"};
  EXPECT_EQ(Encode(chunk, 0, names),
            R"({"b":true,"s":-5,"i":70000,"l":-9223372036854775808,"f":0.1,"d":0.1,"v":"x"})");
  EXPECT_EQ(Encode(chunk, 1, names),
            R"({"b":null,"s":null,"i":null,"l":null,"f":null,"d":null,"v":null})");
  // A subset of the columns, in the order given, under other names.
  std::string out;
  JsonObjectEncoder({6, 0}, {"name \"q\"", "ok"}).Append(chunk, 0, &out);
  EXPECT_EQ(out, R"({"name \"q\"":"x","ok":true})");
  out.clear();
  JsonObjectEncoder({}, {}).Append(chunk, 0, &out);
  EXPECT_EQ(out, "{}");
}

TEST(FormatJsonEncoderTest, OneEncoderServesManyRowsAndChunks) {
  // The names are escaped once, when the encoder is made; every row appends its object.
  JsonObjectEncoder encoder({1, 0}, {"k\n", "v"});
  std::string out;
  for (int64_t part = 0; part < 2; ++part) {
    Chunk chunk = Chunk::WithTypes({TypeId::kVarchar, TypeId::kInt64});
    chunk.AppendRow({Value::String("a\"" + std::to_string(part)), Value::Int(part)},
                    RowOp::kInsert);
    chunk.AppendRow({Value::Null(), Value::Int(-part)}, RowOp::kInsert);
    for (size_t row = 0; row < chunk.size(); ++row) encoder.Append(chunk, row, &out);
  }
  EXPECT_EQ(out, R"({"k\n":0,"v":"a\"0"}{"k\n":0,"v":null})"
                 R"({"k\n":1,"v":"a\"1"}{"k\n":-1,"v":null})");
  out.clear();
  Chunk one = Chunk::WithTypes({TypeId::kInt64});
  one.AppendRow({Value::Int(1)}, RowOp::kInsert);
  JsonObjectEncoder({}, {}).Append(one, 0, &out);
  EXPECT_EQ(out, "{}");
}
TEST(FormatJsonEncoderTest, WritesDoublesInTheShortestRoundTripText) {
  Chunk chunk = Chunk::WithTypes({TypeId::kFloat64, TypeId::kFloat32});
  auto encoded = [&](double d, float f) {
    chunk = Chunk::WithTypes({TypeId::kFloat64, TypeId::kFloat32});
    chunk.AppendRow({Value::Double(d), Value::Double(f)}, RowOp::kInsert);
    return Encode(chunk, 0, {"d", "f"});
  };
  EXPECT_EQ(encoded(100, 100), R"({"d":100,"f":100})");
  EXPECT_EQ(encoded(1e20, 1e20f), R"({"d":1e+20,"f":1e+20})");
  EXPECT_EQ(encoded(-0.0, -0.0f), R"({"d":-0,"f":-0})");
  EXPECT_EQ(encoded(5e-324, 1e-45f), R"({"d":5e-324,"f":1e-45})");
  EXPECT_EQ(encoded(1.0 / 3, 1.0f / 3), R"({"d":0.3333333333333333,"f":0.33333334})");
  EXPECT_EQ(encoded(std::numeric_limits<double>::max(), std::numeric_limits<float>::max()),
            R"({"d":1.7976931348623157e+308,"f":3.4028235e+38})");
  double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(encoded(std::nan(""), std::nanf("")), R"({"d":"NaN","f":"NaN"})");
  EXPECT_EQ(encoded(inf, -std::numeric_limits<float>::infinity()),
            R"({"d":"Infinity","f":"-Infinity"})");
  EXPECT_EQ(encoded(-inf, 0), R"({"d":"-Infinity","f":0})");
}

TEST(FormatJsonEncoderTest, EscapesStringsAndNames) {
  auto json_string = [](std::string_view text) {
    std::string out;
    AppendJsonString(text, &out);
    return out;
  };
  EXPECT_EQ(json_string(""), R"("")");
  EXPECT_EQ(json_string("a\"b\\c/d"), R"("a\"b\\c/d")");
  EXPECT_EQ(json_string("\b\f\n\r\t"), R"("\b\f\n\r\t")");
  EXPECT_EQ(json_string(std::string("\0\x01\x1f\x7f", 4)), "\"\\u0000\\u0001\\u001f\x7f\"");
  EXPECT_EQ(json_string("caf\xC3\xA9 \xF0\x9F\x98\x80 \xE2\x80\xA8"),
            "\"caf\xC3\xA9 \xF0\x9F\x98\x80 \xE2\x80\xA8\"");
  // Bytes that are not UTF-8 become U+FFFD, one for each byte.
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(json_string("a\xff"
                        "b"),
            "\"a" + fffd + "b\"");
  EXPECT_EQ(json_string("\xC3"), "\"" + fffd + "\"");                        // Truncated.
  EXPECT_EQ(json_string("\xE2\x82"), "\"" + fffd + fffd + "\"");             // Truncated.
  EXPECT_EQ(json_string("\xC0\xAF"), "\"" + fffd + fffd + "\"");             // Overlong.
  EXPECT_EQ(json_string("\xED\xA0\x80"), "\"" + fffd + fffd + fffd + "\"");  // Surrogate.
  EXPECT_EQ(json_string("\xF4\x90\x80\x80"), "\"" + fffd + fffd + fffd + fffd + "\"");
  EXPECT_EQ(json_string("\x80"), "\"" + fffd + "\"");

  Chunk chunk = Chunk::WithTypes({TypeId::kVarchar});
  chunk.AppendRow({Value::String("v")}, RowOp::kInsert);
  EXPECT_EQ(Encode(chunk, 0, {"a\"\n\xff"}), "{\"a\\\"\\n" + fffd + "\":\"v\"}");
}

// Encoded rows parse as JSON (with another parser) and decode back to the same values.
// Doubles cover zeros, subnormals, extremes, NaN and infinities, then random bit patterns.
// ---------------------------------------------------------------------------------------
// Temporal columns

std::vector<PayloadColumn> TemporalColumns() {
  return {{1, "d", TypeId::kDate},
          {2, "t", TypeId::kTime},
          {3, "ts", TypeId::kTimestamp},
          {4, "tz", TypeId::kTimestampTz},
          {5, "iv", TypeId::kInterval}};
}

Value Parsed(std::string_view text, DataType type) {
  return CastValue(Value::String(std::string(text)), TypeId::kVarchar, type);
}

TEST(FormatTemporalTest, JsonTakesIsoTextAndEpochMilliseconds) {
  Decoding json("json", TemporalColumns());
  auto row = json.RowOf(R"({"d":"2024-02-29","t":"10:11:12.5","ts":"2024-01-02T03:04:05.123456",)"
                        R"("tz":"2024-01-02 03:04:05+02","iv":"1 day 2 hours"})");
  EXPECT_EQ(row, (std::vector<Value>{Parsed("2024-02-29", TypeId::kDate),
                                     Parsed("10:11:12.5", TypeId::kTime),
                                     Parsed("2024-01-02 03:04:05.123456", TypeId::kTimestamp),
                                     Parsed("2024-01-02 01:04:05Z", TypeId::kTimestampTz),
                                     Parsed("1 day 02:00", TypeId::kInterval)}));
  EXPECT_EQ(row[4].ToText(TypeId::kInterval), "1 day 02:00:00");
  // Numbers in timestamp columns are milliseconds since 1970.
  row = json.RowOf(R"({"ts":1704164645123,"tz":0,"d":null})");
  EXPECT_EQ(row[2].ToText(TypeId::kTimestamp), "2024-01-02 03:04:05.123");
  EXPECT_EQ(row[3].ToText(TypeId::kTimestampTz), "1970-01-01 00:00:00+00");
  EXPECT_TRUE(row[0].is_null());
  EXPECT_TRUE(
      Contains(json.ErrorOf(R"({"d":"2024-02-30"})"), R"(field "d": invalid date "2024-02-30")"));
  EXPECT_TRUE(Contains(json.ErrorOf(R"({"iv":"soon"})"), "invalid interval"));
  EXPECT_TRUE(Contains(json.ErrorOf(R"({"d":20240101})"), "expected a date"));
  EXPECT_TRUE(Contains(json.ErrorOf(R"({"ts":9223372036854775807})"), "out of range"));
  EXPECT_TRUE(Contains(json.ErrorOf(R"({"t":true})"), "expected a time"));
}

TEST(FormatTemporalTest, CsvTakesIsoText) {
  Decoding csv("csv", TemporalColumns());
  auto row = csv.RowOf("2024-02-29,10:11:12,2024-01-02 03:04:05,2024-01-02T03:04:05Z,-1 mon");
  EXPECT_EQ(row[0].ToText(TypeId::kDate), "2024-02-29");
  EXPECT_EQ(row[1].ToText(TypeId::kTime), "10:11:12");
  EXPECT_EQ(row[2].ToText(TypeId::kTimestamp), "2024-01-02 03:04:05");
  EXPECT_EQ(row[3].ToText(TypeId::kTimestampTz), "2024-01-02 03:04:05+00");
  EXPECT_EQ(row[4].ToText(TypeId::kInterval), "-1 mons");
  EXPECT_EQ(csv.RowOf(",,,,"), NullRow(5));
  EXPECT_TRUE(Contains(csv.ErrorOf("2024-13-01,,,,"), R"(field "d": invalid date)"));
  EXPECT_TRUE(Contains(csv.ErrorOf(",25:00,,,"), "SQLSTATE 22008"));
}

TEST(FormatTemporalTest, JsonEncoderWritesIsoTextThatDecodesBack) {
  std::vector<DataType> types = {TypeId::kDate, TypeId::kTime, TypeId::kTimestamp,
                                 TypeId::kTimestampTz, TypeId::kInterval};
  Chunk chunk = Chunk::WithTypes(types);
  std::vector<Value> values = {Parsed("2024-02-29", TypeId::kDate),
                               Parsed("23:59:59.999999", TypeId::kTime),
                               Parsed("1999-12-31 23:59:59.5", TypeId::kTimestamp),
                               Parsed("2024-01-02 03:04:05Z", TypeId::kTimestampTz),
                               Parsed("-1 year 2 days -00:00:01", TypeId::kInterval)};
  chunk.AppendRow(values, RowOp::kInsert);
  std::string json = Encode(chunk, 0, {"d", "t", "ts", "tz", "iv"});
  EXPECT_EQ(json, R"({"d":"2024-02-29","t":"23:59:59.999999","ts":"1999-12-31 23:59:59.5",)"
                  R"("tz":"2024-01-02 03:04:05+00","iv":"-1 years +2 days -00:00:01"})");
  std::string from_values;
  AppendJsonValue(values[4], TypeId::kInterval, &from_values);
  EXPECT_EQ(from_values, R"("-1 years +2 days -00:00:01")");
  Decoding decoding("json", TemporalColumns());
  EXPECT_EQ(decoding.RowOf(json), values);
}

std::vector<PayloadColumn> NumericColumns() {
  return {{1, "n", TypeId::kNumeric}, {2, "m", DataType::Numeric(6, 2)}};
}

TEST(FormatNumericTest, JsonAndCsvKeepEveryDigit) {
  Decoding json("json", NumericColumns());
  // The number's own digits, not a double's; the column's scale rounds half away from zero.
  auto row = json.RowOf(R"({"n":0.10000000000000000000001,"m":12.345})");
  EXPECT_EQ(row[0].ToText(TypeId::kNumeric), "0.10000000000000000000001");
  EXPECT_EQ(row[1].ToText(TypeId::kNumeric), "12.35");
  row = json.RowOf(R"({"n":"NaN","m":-1e2 })");
  EXPECT_EQ(row[0].ToText(TypeId::kNumeric), "NaN");
  EXPECT_EQ(row[1].ToText(TypeId::kNumeric), "-100.00");
  EXPECT_EQ(json.RowOf(R"({"n":null})"), NullRow(2));
  EXPECT_TRUE(Contains(json.ErrorOf(R"({"m":12345})"), "SQLSTATE 22003"));
  EXPECT_FALSE(json.Decode(R"({"n":true})").ok);
  Decoding csv("csv", NumericColumns());
  row = csv.RowOf("1.50,-0.005");
  EXPECT_EQ(row[0].ToText(TypeId::kNumeric), "1.50");
  EXPECT_EQ(row[1].ToText(TypeId::kNumeric), "-0.01");
  EXPECT_TRUE(Contains(csv.ErrorOf("abc,1"), "SQLSTATE 22P02"));
}

TEST(FormatNumericTest, JsonEncoderWritesNumbersWithTheirScale) {
  Chunk chunk = Chunk::WithTypes({TypeId::kNumeric, TypeId::kNumeric});
  chunk.AppendRow({Value::Numeric(decimal::Parse("-12.50")), Value::Numeric(Decimal::NaN())},
                  RowOp::kInsert);
  EXPECT_EQ(Encode(chunk, 0, {"a", "b"}), R"({"a":-12.50,"b":"NaN"})");
}

TEST(FormatJsonEncoderTest, WritesByteaJsonbAndArraysAsToJsonDoesAndTheyDecodeBack) {
  DataType int_array = DataType::ArrayOf(TypeId::kInt32);
  DataType text_array = DataType::ArrayOf(TypeId::kVarchar);
  std::vector<DataType> types = {TypeId::kBytea, TypeId::kJsonb, int_array, text_array};
  Chunk chunk = Chunk::WithTypes(types);
  std::vector<Value> values = {
      Parsed("\\xde00ad", TypeId::kBytea), Parsed(R"({"b": [1, 2.50], "a": null})", TypeId::kJsonb),
      Parsed("{1,NULL,-3}", int_array), Parsed(R"({"a b","",NULL,"q\"x"})", text_array)};
  chunk.AppendRow(values, RowOp::kInsert);
  std::string json = Encode(chunk, 0, {"b", "j", "i", "t"});
  EXPECT_EQ(json, R"({"b":"\\xde00ad","j":{"a": null, "b": [1, 2.50]},"i":[1,null,-3],)"
                  R"("t":["a b","",null,"q\"x"]})");
  std::vector<PayloadColumn> columns = {
      {0, "b", types[0]}, {1, "j", types[1]}, {2, "i", types[2]}, {3, "t", types[3]}};
  Chunk decoded = Chunk::WithTypes(types);
  std::string error;
  ASSERT_TRUE(MakeRecordDecoder("json", columns, {})->Decode(json, &decoded, &error)) << error;
  EXPECT_EQ(decoded.columns[0].GetValue(0), values[0]);
  EXPECT_EQ(decoded.columns[1].GetValue(0), values[1]);
  EXPECT_EQ(decoded.columns[2].GetValue(0), values[2]);
  EXPECT_EQ(decoded.columns[3].GetValue(0), values[3]);
}

TEST(FormatRoundTripTest, EncoderOutputDecodesToTheSameValues) {
  std::vector<PayloadColumn> columns = TestColumns();
  for (PayloadColumn& column : columns) column.index -= 1;
  std::vector<DataType> types;
  std::vector<size_t> indexes;
  std::vector<std::string> names;
  for (const PayloadColumn& column : columns) {
    types.push_back(column.type);
    indexes.push_back(column.index);
    names.push_back(column.name);
  }
  const std::vector<std::string> strings = {"",
                                            "plain",
                                            "quote \" backslash \\ slash /",
                                            std::string("nul \0 inside", 12),
                                            "\x01\x02\x1f\x7f\b\f\n\r\t",
                                            "caf\xC3\xA9 \xF0\x9F\x98\x80",
                                            "\"}],{[:",
                                            "\\u0041",
                                            std::string(5000, 'z')};
  const std::vector<double> doubles = {0.0,
                                       -0.0,
                                       0.1,
                                       -1.5e-300,
                                       5e-324,
                                       1e308,
                                       std::numeric_limits<double>::max(),
                                       123456789.125,
                                       std::numeric_limits<double>::infinity(),
                                       -std::numeric_limits<double>::infinity(),
                                       std::nan("")};
  std::mt19937_64 random(11);
  Chunk input = Chunk::WithTypes(types);
  for (int i = 0; i < 500; ++i) {
    auto maybe_null = [&](Value value) { return random() % 7 == 0 ? Value() : value; };
    int64_t wide = static_cast<int64_t>(random());
    double d = i < static_cast<int>(doubles.size())
                   ? doubles[i]
                   : std::bit_cast<double>((random() & ~(uint64_t{0x7FF} << 52)) |
                                           (uint64_t{random() % 0x7FF} << 52));
    input.AppendRow({maybe_null(Value::Int(i < 2 ? (i == 0 ? std::numeric_limits<int64_t>::min()
                                                           : std::numeric_limits<int64_t>::max())
                                                 : wide)),
                     maybe_null(Value::String(strings[random() % strings.size()])),
                     maybe_null(Value::Double(d)), maybe_null(Value::Boolean(random() % 2 == 1)),
                     maybe_null(Value::Int(static_cast<int16_t>(wide))),
                     maybe_null(Value::Int(static_cast<int32_t>(wide))),
                     maybe_null(Value::Double(static_cast<float>(d)))},
                    RowOp::kInsert);
  }
  std::unique_ptr<RecordDecoder> decoder = MakeRecordDecoder("json", columns, {});
  Chunk output = Chunk::WithTypes(types);
  for (size_t row = 0; row < input.size(); ++row) {
    std::string json;
    JsonObjectEncoder(indexes, names).Append(input, row, &json);
    EXPECT_TRUE(nlohmann::json::accept(json)) << json;
    // The same row held as Values encodes the same.
    std::string from_values = "{";
    for (size_t c = 0; c < types.size(); ++c) {
      if (c > 0) from_values += ',';
      AppendJsonString(names[c], &from_values);
      from_values += ':';
      AppendJsonValue(input.columns[c].GetValue(row), types[c], &from_values);
    }
    EXPECT_EQ(from_values + "}", json);
    std::string error;
    ASSERT_TRUE(decoder->Decode(json, &output, &error)) << json << "\n" << error;
    output.ops.push_back(RowOp::kInsert);
  }
  for (size_t c = 0; c < types.size(); ++c) {
    const Column& a = input.columns[c];
    const Column& b = output.columns[c];
    EXPECT_EQ(a.nulls, b.nulls);
    EXPECT_EQ(a.ints, b.ints);
    EXPECT_EQ(a.strings, b.strings);
    ASSERT_EQ(a.doubles.size(), b.doubles.size());
    for (size_t r = 0; r < a.doubles.size(); ++r) {
      // Bit for bit: -0 stays -0, and NaN stays NaN.
      EXPECT_TRUE(std::bit_cast<uint64_t>(a.doubles[r]) == std::bit_cast<uint64_t>(b.doubles[r]) ||
                  (std::isnan(a.doubles[r]) && std::isnan(b.doubles[r])))
          << "column " << c << " row " << r << ": " << a.doubles[r] << " vs " << b.doubles[r];
    }
  }
}

}  // namespace
}  // namespace stave::executor
