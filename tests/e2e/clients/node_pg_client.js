// node-postgres (`pg`) against staved: parameterized queries and named prepared statements,
// which pg sends with the extended query protocol. Run by extended_protocol_test.py with the
// server's port, and the password of the user stave when the server asks for one, as its
// arguments.
'use strict';

const assert = require('assert');
const { Client } = require('pg');

async function main() {
  const password = process.argv[3];
  if (password !== undefined) {
    // A wrong password is refused with 28P01.
    const wrong = new Client({
      host: '127.0.0.1', port: Number(process.argv[2]), user: 'stave', database: 'stave',
      password: password + '-wrong',
    });
    await assert.rejects(wrong.connect(), (error) => {
      assert.strictEqual(error.code, '28P01');
      assert.strictEqual(error.message, 'password authentication failed for user "stave"');
      return true;
    });
  }
  const client = new Client({
    host: '127.0.0.1', port: Number(process.argv[2]), user: 'stave', database: 'stave', password,
  });
  await client.connect();
  await client.query('CREATE TABLE js_items (id INT PRIMARY KEY, name TEXT, price DOUBLE PRECISION)');
  for (let i = 1; i <= 5; i++) {
    const result = await client.query('INSERT INTO js_items VALUES ($1, $2, $3)', [i, `item ${i}`, i * 1.5]);
    assert.strictEqual(result.rowCount, 1);
  }
  await client.query('INSERT INTO js_items (id, name) VALUES ($1, $2)', [6, null]);

  let result = await client.query('SELECT name, price FROM js_items WHERE id = $1', [2]);
  assert.deepStrictEqual(result.rows, [{ name: 'item 2', price: 3 }]);
  assert.strictEqual(result.fields[0].dataTypeID, 1043);
  result = await client.query('SELECT id FROM js_items WHERE name IS NULL');
  assert.deepStrictEqual(result.rows, [{ id: 6 }]);

  // A named statement: parsed once, then Bind/Execute only.
  for (let i = 1; i <= 5; i++) {
    result = await client.query({
      name: 'item-by-id', text: 'SELECT name FROM js_items WHERE id = $1', values: [i],
    });
    assert.deepStrictEqual(result.rows, [{ name: `item ${i}` }]);
  }
  result = await client.query({ text: 'SELECT id, name FROM js_items WHERE id < $1 ORDER BY id', values: [3], rowMode: 'array' });
  assert.deepStrictEqual(result.rows, [[1, 'item 1'], [2, 'item 2']]);

  await assert.rejects(client.query('SELECT name FROM js_items WHERE id = $1', ['x']),
    (error) => error.code === '22P02' && /invalid input syntax for type integer/.test(error.message));
  await assert.rejects(client.query('SELECT nosuch FROM js_items WHERE id = $1', [1]),
    (error) => error.code === '42703');
  // The connection goes on after errors.
  result = await client.query('SELECT count(*) AS n FROM js_items WHERE id > $1', [0]);
  assert.deepStrictEqual(result.rows, [{ n: '6' }]);

  await client.query('BEGIN');
  await client.query('UPDATE js_items SET name = $1 WHERE id = $2', ['changed', 1]);
  await client.query('COMMIT');
  result = await client.query('SELECT name FROM js_items WHERE id = $1', [1]);
  assert.deepStrictEqual(result.rows, [{ name: 'changed' }]);
  await client.end();
  console.log('node-postgres: ok');
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
