"""The workload as a DBOS Transact app: a workflow of three steps, each a function
{x} -> {x: x + 1}, started over HTTP by a FastAPI endpoint that runs it and answers its result.

Usage: app.py PORT SYSTEM_DATABASE_URL  (postgresql://... or sqlite:///FILE)
Every DBOS setting but the system database is its default.
"""

import sys

import uvicorn
from dbos import DBOS, DBOSConfig
from fastapi import FastAPI

port = int(sys.argv[1])
database_url = sys.argv[2]

app = FastAPI()
config: DBOSConfig = {"name": "auto-peers", "system_database_url": database_url}
DBOS(config=config)


@DBOS.step()
def add_one(data: dict) -> dict:
    return {"x": data["x"] + 1}


@DBOS.workflow()
def add_three_times(data: dict) -> dict:
    data = add_one(data)
    data = add_one(data)
    data = add_one(data)
    return data


@app.post("/add-three-times")
def run(data: dict) -> dict:
    return add_three_times(data)


@app.get("/health")
def health() -> dict:
    return {"ok": True}


if __name__ == "__main__":
    DBOS.launch()
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
