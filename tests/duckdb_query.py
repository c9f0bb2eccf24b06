"""Runs one SQL query with DuckDB and prints the result as JSON, for the end-to-end tests.

Usage: python3 tests/duckdb_query.py "SELECT ..."
Prints {"columns": [[name, type], ...], "rows": [[...], ...]}.
"""

import json
import sys

import duckdb


def main() -> None:
    connection = duckdb.connect()
    result = connection.execute(sys.argv[1])
    columns = [[column[0], str(column[1])] for column in result.description]
    rows = [list(row) for row in result.fetchall()]
    json.dump({"columns": columns, "rows": rows}, sys.stdout, default=str)


if __name__ == "__main__":
    main()
