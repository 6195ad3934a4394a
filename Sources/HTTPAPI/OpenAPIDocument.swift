// The OpenAPI 3.1 document of the v1 API, served at /openapi.json. A test checks that every routed path is in
// it and every path in it is routed.
enum OpenAPIDocument {
    static let json = #"""
{
 "openapi": "3.1.0",
 "info": {
  "title": "POI search service",
  "version": "1.0.0",
  "description": "Nearby, keyword, box/polygon and cluster queries over POIs and pins; geocoding; coordinate conversion. All coordinates WGS-84 unless coordsys says otherwise. Errors are RFC 9457 problem+json."
 },
 "paths": {
  "/": {
   "get": {
    "operationId": "mapPage",
    "summary": "The map page",
    "description": "Search box with autocomplete, results list and markers, nearby on click, clusters when zoomed out, pins, a WGS-84/GCJ-02 switch; the view's state is in the URL (q, lat, lon, z, near, coordsys, tab), which the page reads itself. Its files are under /static/.",
    "responses": {
     "200": {
      "description": "An HTML page",
      "content": {
       "text/html": {
        "schema": {
         "type": "string"
        }
       }
      }
     }
    }
   }
  },
  "/docs": {
   "get": {
    "operationId": "docsPage",
    "summary": "This document as a page",
    "description": "The operations of /openapi.json with their parameters and answers.",
    "responses": {
     "200": {
      "description": "An HTML page",
      "content": {
       "text/html": {
        "schema": {
         "type": "string"
        }
       }
      }
     }
    }
   }
  },
  "/v1/nearby": {
   "get": {
    "operationId": "nearby",
    "summary": "Nearest first from an origin",
    "parameters": [
     {
      "name": "lat",
      "in": "query",
      "schema": {
       "type": "number",
       "minimum": -90,
       "maximum": 90
      },
      "required": true
     },
     {
      "name": "lon",
      "in": "query",
      "schema": {
       "type": "number",
       "minimum": -180,
       "maximum": 180
      },
      "required": true
     },
     {
      "name": "radius",
      "in": "query",
      "schema": {
       "type": "number",
       "exclusiveMinimum": 0,
       "maximum": 1000000
      }
     },
     {
      "$ref": "#/components/parameters/q"
     },
     {
      "$ref": "#/components/parameters/category"
     },
     {
      "$ref": "#/components/parameters/kind"
     },
     {
      "$ref": "#/components/parameters/limit"
     },
     {
      "$ref": "#/components/parameters/cursor"
     },
     {
      "$ref": "#/components/parameters/coordsys"
     },
     {
      "$ref": "#/components/parameters/format"
     }
    ],
    "responses": {
     "200": {
      "description": "A page of records",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/RecordList"
        }
       },
       "application/geo+json": {
        "schema": {
         "type": "object"
        }
       }
      }
     },
     "400": {
      "$ref": "#/components/responses/Problem"
     }
    }
   }
  },
  "/v1/search": {
   "get": {
    "operationId": "search",
    "summary": "Keyword search ranked by relevance",
    "parameters": [
     {
      "name": "q",
      "in": "query",
      "schema": {
       "type": "string",
       "minLength": 1,
       "maxLength": 500,
       "pattern": "^[^\\u0000-\\u001F\\u007F-\\u009F]*[^\\s\\u0000-\\u001F\\u007F-\\u009F][^\\u0000-\\u001F\\u007F-\\u009F]*$"
      },
      "required": true
     },
     {
      "$ref": "#/components/parameters/lat"
     },
     {
      "$ref": "#/components/parameters/lon"
     },
     {
      "$ref": "#/components/parameters/bbox"
     },
     {
      "$ref": "#/components/parameters/category"
     },
     {
      "$ref": "#/components/parameters/kind"
     },
     {
      "$ref": "#/components/parameters/limit"
     },
     {
      "name": "offset",
      "in": "query",
      "schema": {
       "type": "integer",
       "minimum": 0,
       "maximum": 10000
      }
     },
     {
      "$ref": "#/components/parameters/coordsys"
     },
     {
      "$ref": "#/components/parameters/format"
     }
    ],
    "responses": {
     "200": {
      "description": "A page of records",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/RecordList"
        }
       },
       "application/geo+json": {
        "schema": {
         "type": "object"
        }
       }
      }
     },
     "400": {
      "$ref": "#/components/responses/Problem"
     }
    }
   }
  },
  "/v1/within": {
   "get": {
    "operationId": "within",
    "summary": "Records inside a box or polygon",
    "parameters": [
     {
      "$ref": "#/components/parameters/bbox"
     },
     {
      "name": "polygon",
      "in": "query",
      "schema": {
       "type": "string",
       "pattern": "^ *[+-]?(?:[0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)(?:[eE][+-]?[0-9]+)? *, *[+-]?(?:[0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)(?:[eE][+-]?[0-9]+)? *(?:; *[+-]?(?:[0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)(?:[eE][+-]?[0-9]+)? *, *[+-]?(?:[0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)(?:[eE][+-]?[0-9]+)? *){2,9999};? *$"
      },
      "description": "lon,lat;lon,lat;… — 3 to 10000 vertices of a simple polygon (edges may not cross), in degrees; the request line is limited to 64 KiB (about 2 500 vertices at full precision)."
     },
     {
      "$ref": "#/components/parameters/q"
     },
     {
      "$ref": "#/components/parameters/category"
     },
     {
      "$ref": "#/components/parameters/kind"
     },
     {
      "$ref": "#/components/parameters/limit"
     },
     {
      "$ref": "#/components/parameters/cursor"
     },
     {
      "$ref": "#/components/parameters/coordsys"
     },
     {
      "$ref": "#/components/parameters/format"
     }
    ],
    "responses": {
     "200": {
      "description": "A page of records",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/RecordList"
        }
       },
       "application/geo+json": {
        "schema": {
         "type": "object"
        }
       }
      }
     },
     "400": {
      "$ref": "#/components/responses/Problem"
     }
    }
   }
  },
  "/v1/clusters": {
   "get": {
    "operationId": "clusters",
    "summary": "Counts and centroids per geohash cell",
    "parameters": [
     {
      "name": "bbox",
      "in": "query",
      "schema": {
       "type": "string"
      },
      "description": "west,south,east,north; west > east crosses the antimeridian.",
      "required": true
     },
     {
      "name": "precision",
      "in": "query",
      "required": true,
      "schema": {
       "type": "integer",
       "minimum": 1,
       "maximum": 12
      }
     },
     {
      "$ref": "#/components/parameters/q"
     },
     {
      "$ref": "#/components/parameters/category"
     },
     {
      "$ref": "#/components/parameters/kind"
     },
     {
      "$ref": "#/components/parameters/coordsys"
     },
     {
      "$ref": "#/components/parameters/format"
     }
    ],
    "responses": {
     "200": {
      "description": "Cells",
      "content": {
       "application/json": {
        "schema": {
         "type": "object"
        }
       }
      }
     },
     "400": {
      "$ref": "#/components/responses/Problem"
     }
    }
   }
  },
  "/v1/pois/{id}": {
   "get": {
    "operationId": "getPOI",
    "parameters": [
     {
      "$ref": "#/components/parameters/id"
     },
     {
      "$ref": "#/components/parameters/coordsys"
     },
     {
      "$ref": "#/components/parameters/format"
     }
    ],
    "responses": {
     "200": {
      "description": "One record",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Record"
        }
       },
       "application/geo+json": {
        "schema": {
         "type": "object"
        }
       }
      }
     },
     "404": {
      "$ref": "#/components/responses/Problem"
     },
     "400": {
      "$ref": "#/components/responses/Problem"
     }
    }
   },
   "put": {
    "operationId": "putPOI",
    "security": [
     {
      "bearer": []
     }
    ],
    "parameters": [
     {
      "$ref": "#/components/parameters/id"
     },
     {
      "$ref": "#/components/parameters/coordsys"
     },
     {
      "$ref": "#/components/parameters/format"
     }
    ],
    "requestBody": {
     "required": true,
     "content": {
      "application/json": {
       "schema": {
        "$ref": "#/components/schemas/POIInput"
       }
      }
     }
    },
    "responses": {
     "200": {
      "description": "One record",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Record"
        }
       },
       "application/geo+json": {
        "schema": {
         "type": "object"
        }
       }
      }
     },
     "201": {
      "description": "One record",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Record"
        }
       },
       "application/geo+json": {
        "schema": {
         "type": "object"
        }
       }
      }
     },
     "400": {
      "$ref": "#/components/responses/Problem"
     },
     "401": {
      "$ref": "#/components/responses/Problem"
     },
     "413": {
      "$ref": "#/components/responses/Problem"
     },
     "404": {
      "$ref": "#/components/responses/Problem"
     }
    }
   },
   "delete": {
    "operationId": "deletePOI",
    "security": [
     {
      "bearer": []
     }
    ],
    "parameters": [
     {
      "$ref": "#/components/parameters/id"
     }
    ],
    "responses": {
     "204": {
      "description": "Deleted"
     },
     "401": {
      "$ref": "#/components/responses/Problem"
     },
     "404": {
      "$ref": "#/components/responses/Problem"
     },
     "400": {
      "$ref": "#/components/responses/Problem"
     }
    }
   }
  },
  "/v1/pins": {
   "get": {
    "operationId": "listPins",
    "parameters": [
     {
      "$ref": "#/components/parameters/limit"
     },
     {
      "name": "skip",
      "in": "query",
      "schema": {
       "type": "integer",
       "minimum": 0,
       "maximum": 1000000
      }
     },
     {
      "name": "order",
      "in": "query",
      "schema": {
       "type": "string",
       "enum": [
        "-updatedAt",
        "updatedAt",
        "-createdAt",
        "createdAt"
       ]
      }
     },
     {
      "name": "uniqueKey",
      "in": "query",
      "schema": {
       "type": "string",
       "maxLength": 200
      }
     },
     {
      "$ref": "#/components/parameters/coordsys"
     },
     {
      "$ref": "#/components/parameters/format"
     }
    ],
    "responses": {
     "200": {
      "description": "A page of records",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/RecordList"
        }
       },
       "application/geo+json": {
        "schema": {
         "type": "object"
        }
       }
      }
     },
     "400": {
      "$ref": "#/components/responses/Problem"
     }
    }
   },
   "post": {
    "operationId": "createPin",
    "security": [
     {
      "bearer": []
     }
    ],
    "parameters": [
     {
      "$ref": "#/components/parameters/coordsys"
     },
     {
      "$ref": "#/components/parameters/format"
     }
    ],
    "requestBody": {
     "required": true,
     "content": {
      "application/json": {
       "schema": {
        "$ref": "#/components/schemas/PinInput"
       }
      }
     }
    },
    "responses": {
     "201": {
      "description": "One record",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Record"
        }
       },
       "application/geo+json": {
        "schema": {
         "type": "object"
        }
       }
      }
     },
     "400": {
      "$ref": "#/components/responses/Problem"
     },
     "401": {
      "$ref": "#/components/responses/Problem"
     },
     "413": {
      "$ref": "#/components/responses/Problem"
     }
    }
   }
  },
  "/v1/pins/{id}": {
   "get": {
    "operationId": "getPin",
    "parameters": [
     {
      "$ref": "#/components/parameters/id"
     },
     {
      "$ref": "#/components/parameters/coordsys"
     },
     {
      "$ref": "#/components/parameters/format"
     }
    ],
    "responses": {
     "200": {
      "description": "One record",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Record"
        }
       },
       "application/geo+json": {
        "schema": {
         "type": "object"
        }
       }
      }
     },
     "404": {
      "$ref": "#/components/responses/Problem"
     },
     "400": {
      "$ref": "#/components/responses/Problem"
     }
    }
   },
   "put": {
    "operationId": "updatePin",
    "security": [
     {
      "bearer": []
     }
    ],
    "parameters": [
     {
      "$ref": "#/components/parameters/id"
     },
     {
      "$ref": "#/components/parameters/coordsys"
     },
     {
      "$ref": "#/components/parameters/format"
     }
    ],
    "requestBody": {
     "required": true,
     "content": {
      "application/json": {
       "schema": {
        "$ref": "#/components/schemas/PinInput"
       }
      }
     }
    },
    "responses": {
     "200": {
      "description": "One record",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Record"
        }
       },
       "application/geo+json": {
        "schema": {
         "type": "object"
        }
       }
      }
     },
     "400": {
      "$ref": "#/components/responses/Problem"
     },
     "401": {
      "$ref": "#/components/responses/Problem"
     },
     "404": {
      "$ref": "#/components/responses/Problem"
     },
     "413": {
      "$ref": "#/components/responses/Problem"
     }
    }
   },
   "delete": {
    "operationId": "deletePin",
    "security": [
     {
      "bearer": []
     }
    ],
    "parameters": [
     {
      "$ref": "#/components/parameters/id"
     }
    ],
    "responses": {
     "204": {
      "description": "Deleted"
     },
     "401": {
      "$ref": "#/components/responses/Problem"
     },
     "404": {
      "$ref": "#/components/responses/Problem"
     },
     "400": {
      "$ref": "#/components/responses/Problem"
     }
    }
   }
  },
  "/v1/geocode": {
   "get": {
    "operationId": "geocode",
    "parameters": [
     {
      "name": "q",
      "in": "query",
      "schema": {
       "type": "string",
       "minLength": 1,
       "maxLength": 500,
       "pattern": "^[^\\u0000-\\u001F\\u007F-\\u009F]*[^\\s\\u0000-\\u001F\\u007F-\\u009F][^\\u0000-\\u001F\\u007F-\\u009F]*$"
      },
      "required": true
     },
     {
      "name": "limit",
      "in": "query",
      "schema": {
       "type": "integer",
       "minimum": 1,
       "maximum": 100,
       "default": 10
      }
     },
     {
      "name": "country",
      "in": "query",
      "schema": {
       "type": "string",
       "pattern": "^[A-Za-z]{2}$"
      }
     },
     {
      "name": "lang",
      "in": "query",
      "schema": {
       "type": "string",
       "pattern": "^(?:[Ee][Nn]|[Zz][Hh])$"
      }
     },
     {
      "$ref": "#/components/parameters/lat"
     },
     {
      "$ref": "#/components/parameters/lon"
     },
     {
      "$ref": "#/components/parameters/coordsys"
     }
    ],
    "responses": {
     "200": {
      "description": "Places, best first",
      "content": {
       "application/json": {
        "schema": {
         "type": "object",
         "required": [
          "results",
          "next"
         ],
         "properties": {
          "results": {
           "type": "array",
           "items": {
            "$ref": "#/components/schemas/Place"
           }
          },
          "next": {
           "type": [
            "string",
            "null"
           ]
          }
         }
        }
       }
      }
     },
     "400": {
      "$ref": "#/components/responses/Problem"
     },
     "503": {
      "$ref": "#/components/responses/Problem"
     }
    }
   }
  },
  "/v1/reverse": {
   "get": {
    "operationId": "reverse",
    "parameters": [
     {
      "name": "lat",
      "in": "query",
      "schema": {
       "type": "number",
       "minimum": -90,
       "maximum": 90
      },
      "required": true
     },
     {
      "name": "lon",
      "in": "query",
      "schema": {
       "type": "number",
       "minimum": -180,
       "maximum": 180
      },
      "required": true
     },
     {
      "$ref": "#/components/parameters/coordsys"
     }
    ],
    "responses": {
     "200": {
      "description": "Nearest place and areas",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Reverse"
        }
       }
      }
     },
     "400": {
      "$ref": "#/components/responses/Problem"
     },
     "503": {
      "$ref": "#/components/responses/Problem"
     }
    }
   }
  },
  "/v1/convert": {
   "get": {
    "operationId": "convert",
    "parameters": [
     {
      "name": "from",
      "in": "query",
      "required": true,
      "schema": {
       "type": "string",
       "pattern": "^(?:[Ww][Gg][Ss]84|[Gg][Cc][Jj]02|[Bb][Dd]09|[Ee][Pp][Ss][Gg]:[1-9][0-9]{0,5})$",
       "description": "wgs84, gcj02, bd09 or EPSG:<code> of a CRS known to PROJ."
      }
     },
     {
      "name": "to",
      "in": "query",
      "required": true,
      "schema": {
       "type": "string",
       "pattern": "^(?:[Ww][Gg][Ss]84|[Gg][Cc][Jj]02|[Bb][Dd]09|[Ee][Pp][Ss][Gg]:[1-9][0-9]{0,5})$",
       "description": "wgs84, gcj02, bd09 or EPSG:<code> of a CRS known to PROJ."
      }
     },
     {
      "name": "lat",
      "in": "query",
      "required": true,
      "schema": {
       "type": "number"
      }
     },
     {
      "name": "lon",
      "in": "query",
      "required": true,
      "schema": {
       "type": "number"
      }
     }
    ],
    "responses": {
     "200": {
      "description": "{from,to,point:[x,y]}",
      "content": {
       "application/json": {
        "schema": {
         "type": "object"
        }
       }
      }
     },
     "400": {
      "$ref": "#/components/responses/Problem"
     }
    }
   },
   "post": {
    "operationId": "convertBatch",
    "requestBody": {
     "required": true,
     "content": {
      "application/json": {
       "schema": {
        "type": "object",
        "required": [
         "from",
         "to",
         "points"
        ],
        "properties": {
         "from": {
          "type": "string",
          "pattern": "^(?:[Ww][Gg][Ss]84|[Gg][Cc][Jj]02|[Bb][Dd]09|[Ee][Pp][Ss][Gg]:[1-9][0-9]{0,5})$",
          "description": "wgs84, gcj02, bd09 or EPSG:<code> of a CRS known to PROJ."
         },
         "to": {
          "type": "string",
          "pattern": "^(?:[Ww][Gg][Ss]84|[Gg][Cc][Jj]02|[Bb][Dd]09|[Ee][Pp][Ss][Gg]:[1-9][0-9]{0,5})$",
          "description": "wgs84, gcj02, bd09 or EPSG:<code> of a CRS known to PROJ."
         },
         "points": {
          "type": "array",
          "maxItems": 100000,
          "items": {
           "type": "array",
           "minItems": 2,
           "maxItems": 2,
           "items": {
            "type": "number"
           }
          }
         }
        }
       }
      }
     }
    },
    "responses": {
     "200": {
      "description": "{from,to,points}",
      "content": {
       "application/json": {
        "schema": {
         "type": "object"
        }
       }
      }
     },
     "400": {
      "$ref": "#/components/responses/Problem"
     },
     "413": {
      "$ref": "#/components/responses/Problem"
     }
    }
   }
  },
  "/health": {
   "get": {
    "operationId": "health",
    "responses": {
     "200": {
      "description": "Status and record counts",
      "content": {
       "application/json": {
        "schema": {
         "type": "object"
        }
       }
      }
     }
    }
   }
  },
  "/metrics": {
   "get": {
    "operationId": "metrics",
    "responses": {
     "200": {
      "description": "Prometheus text: requests and latency per route and status, record counts",
      "content": {
       "text/plain": {
        "schema": {
         "type": "string"
        }
       }
      }
     }
    }
   }
  },
  "/openapi.json": {
   "get": {
    "operationId": "openapi",
    "responses": {
     "200": {
      "description": "This document",
      "content": {
       "application/json": {
        "schema": {
         "type": "object"
        }
       }
      }
     }
    }
   }
  },
  "/v1/import": {
   "post": {
    "operationId": "importRecords",
    "summary": "Bulk import into the running server",
    "description": "The body is a JSONL, GeoJSON or CSV file (gzip-compressed or not), as for `poi import`, streamed to disk (up to 1 GiB; Content-Length required, chunked bodies get 411). The answer is 202 with a task: one import runs at a time, in order; each batch of 1 000 rows is committed and queryable as it goes, all of them once the task reports succeeded. Bad rows are skipped and reported in the task, or with strict=true the first one stops the import and nothing of it is kept. Writes need the API key when the server has one. The Content-Type may also be application/geo+json (GeoJSON) or anything with format given; the body is read by the task, whose problems and error say what was wrong.",
    "parameters": [
     {
      "name": "format",
      "in": "query",
      "schema": {
       "type": "string",
       "enum": [
        "jsonl",
        "geojson",
        "csv"
       ]
      },
      "description": "jsonl, geojson or csv; default from the Content-Type (application/x-ndjson, application/geo+json, text/csv)."
     },
     {
      "name": "kind",
      "in": "query",
      "schema": {
       "type": "string",
       "enum": [
        "poi",
        "pin"
       ],
       "default": "poi"
      }
     },
     {
      "name": "crs",
      "in": "query",
      "schema": {
       "type": "string",
       "pattern": "^(?:[Ww][Gg][Ss]84|[Gg][Cc][Jj]02|[Bb][Dd]09|[Ee][Pp][Ss][Gg]:[1-9][0-9]{0,5})$",
       "description": "wgs84, gcj02, bd09 or EPSG:<code> of a CRS known to PROJ.",
       "default": "wgs84"
      },
      "description": "Coordinate system of the input."
     },
     {
      "name": "strict",
      "in": "query",
      "schema": {
       "type": "string",
       "enum": [
        "true",
        "false"
       ],
       "default": "false"
      },
      "description": "true: the first bad row stops the import and nothing of it is kept."
     },
     {
      "name": "name",
      "in": "query",
      "schema": {
       "type": "string",
       "minLength": 1,
       "maxLength": 200,
       "pattern": "^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
       "default": "body"
      },
      "description": "The source's name in problem lines (\"places.jsonl:12: …\")."
     }
    ],
    "requestBody": {
     "required": true,
     "content": {
      "application/x-ndjson": {
       "schema": {
        "type": "string",
        "format": "binary",
        "minLength": 1
       }
      },
      "text/csv": {
       "schema": {
        "type": "string",
        "format": "binary",
        "minLength": 1
       }
      }
     }
    },
    "responses": {
     "202": {
      "description": "The import task, queued",
      "headers": {
       "Location": {
        "schema": {
         "type": "string"
        },
        "description": "/v1/tasks/{id}"
       }
      },
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/ImportTask"
        }
       }
      }
     },
     "400": {
      "$ref": "#/components/responses/Problem"
     },
     "401": {
      "$ref": "#/components/responses/Problem"
     },
     "411": {
      "$ref": "#/components/responses/Problem"
     },
     "413": {
      "$ref": "#/components/responses/Problem"
     }
    }
   }
  },
  "/v1/tasks": {
   "get": {
    "operationId": "importTasks",
    "summary": "Recent import tasks, newest first (at most 100)",
    "responses": {
     "200": {
      "description": "Tasks",
      "content": {
       "application/json": {
        "schema": {
         "type": "object",
         "required": [
          "results"
         ],
         "properties": {
          "results": {
           "type": "array",
           "items": {
            "$ref": "#/components/schemas/ImportTask"
           }
          }
         }
        }
       }
      }
     }
    }
   }
  },
  "/v1/tasks/{id}": {
   "get": {
    "operationId": "importTask",
    "summary": "One import task: status, progress, counts and problems",
    "parameters": [
     {
      "name": "id",
      "in": "path",
      "required": true,
      "schema": {
       "type": "string",
       "minLength": 1,
       "maxLength": 200
      }
     }
    ],
    "responses": {
     "200": {
      "description": "The task",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/ImportTask"
        }
       }
      }
     },
     "404": {
      "$ref": "#/components/responses/Problem"
     }
    }
   }
  }
 },
 "components": {
  "parameters": {
   "coordsys": {
    "name": "coordsys",
    "in": "query",
    "schema": {
     "type": "string",
     "pattern": "^(?:[Ww][Gg][Ss]84|[Gg][Cc][Jj]02|[Bb][Dd]09)$",
     "default": "wgs84"
    },
    "description": "Coordinate system of this request's input and output: wgs84, gcj02 or bd09 (any case)."
   },
   "format": {
    "name": "format",
    "in": "query",
    "schema": {
     "type": "string",
     "pattern": "^(?:[Jj][Ss][Oo][Nn]|[Gg][Ee][Oo][Jj][Ss][Oo][Nn])$",
     "default": "json"
    },
    "description": "json or geojson (any case); GeoJSON answers are application/geo+json."
   },
   "kind": {
    "name": "kind",
    "in": "query",
    "schema": {
     "type": "string",
     "enum": [
      "poi",
      "pin",
      "all"
     ],
     "default": "poi"
    }
   },
   "category": {
    "name": "category",
    "in": "query",
    "schema": {
     "type": "string",
     "maxLength": 64,
     "pattern": "^[A-Za-z0-9_]+(\\.[A-Za-z0-9_]+)*$"
    },
    "description": "Category prefix: food matches food.*"
   },
   "q": {
    "name": "q",
    "in": "query",
    "schema": {
     "type": "string",
     "minLength": 1,
     "maxLength": 500,
     "pattern": "^[^\\u0000-\\u001F\\u007F-\\u009F]*[^\\s\\u0000-\\u001F\\u007F-\\u009F][^\\u0000-\\u001F\\u007F-\\u009F]*$"
    },
    "description": "Words to match (all of them; the last may be a prefix; typos tolerated). At most 500 characters, not blank, no control characters."
   },
   "limit": {
    "name": "limit",
    "in": "query",
    "schema": {
     "type": "integer",
     "minimum": 1,
     "maximum": 100,
     "default": 20
    }
   },
   "cursor": {
    "name": "cursor",
    "in": "query",
    "schema": {
     "type": "string",
     "minLength": 1,
     "maxLength": 200,
     "pattern": "^[A-Za-z0-9_-]+$"
    },
    "description": "The next value of the previous page, unchanged, sent with the same query parameters (limit may change); a cursor of another query is a 400."
   },
   "lat": {
    "name": "lat",
    "in": "query",
    "schema": {
     "type": "number",
     "minimum": -90,
     "maximum": 90
    }
   },
   "lon": {
    "name": "lon",
    "in": "query",
    "schema": {
     "type": "number",
     "minimum": -180,
     "maximum": 180
    }
   },
   "bbox": {
    "name": "bbox",
    "in": "query",
    "schema": {
     "type": "string",
     "pattern": "^ *[+-]?(?:[0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)(?:[eE][+-]?[0-9]+)? *, *[+-]?(?:[0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)(?:[eE][+-]?[0-9]+)? *, *[+-]?(?:[0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)(?:[eE][+-]?[0-9]+)? *, *[+-]?(?:[0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)(?:[eE][+-]?[0-9]+)? *$"
    },
    "description": "west,south,east,north in degrees: west and east in [-180, 180], south and north in [-90, 90], south <= north; west > east crosses the antimeridian."
   },
   "id": {
    "name": "id",
    "in": "path",
    "required": true,
    "schema": {
     "type": "string",
     "minLength": 1,
     "maxLength": 200,
     "pattern": "^[^\\u0000-\\u001F\\u007F-\\u009F]*$"
    },
    "description": "Record id, percent-encoded in the path (UTF-8); 1 to 200 characters, no control characters."
   }
  },
  "securitySchemes": {
   "bearer": {
    "type": "http",
    "scheme": "bearer",
    "description": "Writes need Authorization: Bearer <key> when the server has an API key (required on a non-loopback address); a loopback server started without one accepts writes without it."
   }
  },
  "responses": {
   "Problem": {
    "description": "Bad input, named in detail",
    "content": {
     "application/problem+json": {
      "schema": {
       "$ref": "#/components/schemas/Problem"
      }
     }
    }
   }
  },
  "schemas": {
   "Problem": {
    "type": "object",
    "required": [
     "type",
     "title",
     "status",
     "detail"
    ],
    "properties": {
     "type": {
      "type": "string"
     },
     "title": {
      "type": "string"
     },
     "status": {
      "type": "integer"
     },
     "detail": {
      "type": "string"
     },
     "requestId": {
      "type": "string"
     }
    }
   },
   "Record": {
    "type": "object",
    "required": [
     "id",
     "kind",
     "lat",
     "lon"
    ],
    "properties": {
     "id": {
      "type": "string"
     },
     "kind": {
      "type": "string",
      "enum": [
       "poi",
       "pin"
      ]
     },
     "lat": {
      "type": "number"
     },
     "lon": {
      "type": "number"
     },
     "distance": {
      "type": "number"
     },
     "score": {
      "type": "number"
     }
    },
    "additionalProperties": true
   },
   "RecordList": {
    "type": "object",
    "required": [
     "results",
     "next"
    ],
    "properties": {
     "results": {
      "type": "array",
      "items": {
       "$ref": "#/components/schemas/Record"
      }
     },
     "next": {
      "type": [
       "string",
       "null"
      ]
     },
     "total": {
      "type": "integer",
      "description": "Records matching the query's first word (every result matches it) after filters: exact when that word matches through one posting list or at most 4096 postings; above that an estimate, the sum of its posting-list and category sizes before filters."
     }
    }
   },
   "POIInput": {
    "type": "object",
    "required": [
     "name",
     "category",
     "lat",
     "lon"
    ],
    "properties": {
     "name": {
      "type": "string",
      "minLength": 1,
      "maxLength": 200,
      "pattern": "^[^\\u0000-\\u001F\\u007F-\\u009F]*[^\\s\\u0000-\\u001F\\u007F-\\u009F][^\\u0000-\\u001F\\u007F-\\u009F]*$"
     },
     "category": {
      "type": "string",
      "maxLength": 64,
      "pattern": "^[a-z0-9_]+(\\.[a-z0-9_]+)*$",
      "description": "Lower-case dot path, e.g. food.cafe."
     },
     "address": {
      "type": [
       "string",
       "null"
      ],
      "maxLength": 500,
      "pattern": "^[^\\u0000-\\u001F\\u007F-\\u009F]*$"
     },
     "city": {
      "type": [
       "string",
       "null"
      ],
      "maxLength": 500,
      "pattern": "^[^\\u0000-\\u001F\\u007F-\\u009F]*$"
     },
     "country": {
      "type": [
       "string",
       "null"
      ],
      "pattern": "^[A-Z]{2}$",
      "description": "ISO 3166-1 alpha-2 in capitals."
     },
     "lat": {
      "type": "number",
      "minimum": -90,
      "maximum": 90
     },
     "lon": {
      "type": "number",
      "minimum": -180,
      "maximum": 180
     },
     "tags": {
      "type": [
       "object",
       "null"
      ],
      "additionalProperties": {
       "type": "string"
      }
     }
    },
    "description": "A POI. An id in the body, if given, must equal the path id. Unknown fields are ignored."
   },
   "PinInput": {
    "type": "object",
    "properties": {
     "uniqueKey": {
      "type": [
       "string",
       "null"
      ],
      "maxLength": 200,
      "pattern": "^[^\\u0000-\\u001F\\u007F-\\u009F]*$"
     },
     "firstName": {
      "type": [
       "string",
       "null"
      ],
      "maxLength": 200,
      "pattern": "^[^\\u0000-\\u001F\\u007F-\\u009F]*$"
     },
     "lastName": {
      "type": [
       "string",
       "null"
      ],
      "maxLength": 200,
      "pattern": "^[^\\u0000-\\u001F\\u007F-\\u009F]*$"
     },
     "mapString": {
      "type": [
       "string",
       "null"
      ],
      "maxLength": 500,
      "pattern": "^[^\\u0000-\\u001F\\u007F-\\u009F]*$"
     },
     "mediaURL": {
      "type": [
       "string",
       "null"
      ],
      "maxLength": 2000,
      "pattern": "^(|[hH][tT][tT][pP][sS]?://[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*(?::[0-9]{1,5})?(?:/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*)?(?:\\?[A-Za-z0-9._~!$&'()*+,;=:@%/?-]*)?)$",
      "description": "Empty, or an absolute http or https URL (On the Map apps send an empty string when there is none)."
     },
     "lat": {
      "type": "number",
      "minimum": -90,
      "maximum": 90
     },
     "lon": {
      "type": "number",
      "minimum": -180,
      "maximum": 180
     },
     "latitude": {
      "type": "number",
      "minimum": -90,
      "maximum": 90,
      "description": "Same as lat (Parse StudentLocation name); give one of them."
     },
     "longitude": {
      "type": "number",
      "minimum": -180,
      "maximum": 180,
      "description": "Same as lon; give one of them."
     }
    },
    "allOf": [
     {
      "oneOf": [
       {
        "required": [
         "lat"
        ]
       },
       {
        "required": [
         "latitude"
        ]
       }
      ]
     },
     {
      "oneOf": [
       {
        "required": [
         "lon"
        ]
       },
       {
        "required": [
         "longitude"
        ]
       }
      ]
     }
    ],
    "description": "A pin. Missing or null strings are empty. Unknown fields are ignored."
   },
   "ImportTask": {
    "type": "object",
    "required": [
     "id",
     "status",
     "format",
     "kind",
     "crs",
     "strict",
     "bytes",
     "bytesRead",
     "imported",
     "skipped",
     "duplicates",
     "problems",
     "error",
     "createdAt",
     "startedAt",
     "finishedAt"
    ],
    "properties": {
     "id": {
      "type": "string"
     },
     "status": {
      "type": "string",
      "enum": [
       "queued",
       "running",
       "succeeded",
       "failed"
      ]
     },
     "format": {
      "type": "string",
      "enum": [
       "jsonl",
       "geojson",
       "csv"
      ]
     },
     "kind": {
      "type": "string",
      "enum": [
       "poi",
       "pin"
      ]
     },
     "crs": {
      "type": "string"
     },
     "strict": {
      "type": "boolean"
     },
     "bytes": {
      "type": "integer",
      "description": "Size of the body as received."
     },
     "bytesRead": {
      "type": "integer",
      "description": "How far the import has read (progress)."
     },
     "imported": {
      "type": "integer",
      "description": "Distinct records imported (set when the task ends)."
     },
     "skipped": {
      "type": "integer"
     },
     "duplicates": {
      "type": "integer"
     },
     "problems": {
      "type": "array",
      "description": "Rows skipped, with their line and reason (the first 1 000); under strict, the row that stopped the import.",
      "items": {
       "type": "object",
       "required": [
        "line",
        "reason"
       ],
       "properties": {
        "line": {
         "type": "integer"
        },
        "reason": {
         "type": "string"
        }
       }
      }
     },
     "error": {
      "type": [
       "string",
       "null"
      ],
      "description": "Why a failed task failed."
     },
     "createdAt": {
      "type": "string"
     },
     "startedAt": {
      "type": [
       "string",
       "null"
      ]
     },
     "finishedAt": {
      "type": [
       "string",
       "null"
      ]
     }
    },
    "description": "A live import. Tasks are kept in memory (the last 1 000) until the server restarts; the records are durable."
   },
   "Place": {
    "type": "object",
    "required": [
     "id",
     "name",
     "displayName",
     "lat",
     "lon",
     "country",
     "admin1",
     "admin2",
     "type",
     "score"
    ],
    "properties": {
     "id": {
      "type": "string",
      "description": "geonames:<id> or adcode:<code>"
     },
     "name": {
      "type": "string"
     },
     "displayName": {
      "type": "string"
     },
     "lat": {
      "type": "number"
     },
     "lon": {
      "type": "number"
     },
     "country": {
      "type": "string"
     },
     "admin1": {
      "type": "string"
     },
     "admin2": {
      "type": "string"
     },
     "population": {
      "type": [
       "integer",
       "null"
      ]
     },
     "type": {
      "type": "string",
      "enum": [
       "city",
       "province",
       "prefecture",
       "district"
      ]
     },
     "score": {
      "type": "number"
     },
     "adcode": {
      "type": "string"
     },
     "unresolved": {
      "type": "string",
      "description": "The part of the address the gazetteer could not resolve (a street and number): the answer is the place it lies in."
     },
     "distance": {
      "type": "number",
      "description": "Metres from the origin (lat/lon), or from the point for reverse."
     }
    }
   },
   "Reverse": {
    "type": "object",
    "required": [
     "place",
     "country",
     "countryName",
     "admin1",
     "admin2",
     "city",
     "division"
    ],
    "properties": {
     "place": {
      "oneOf": [
       {
        "$ref": "#/components/schemas/Place"
       },
       {
        "type": "null"
       }
      ],
      "description": "The nearest populated place, with its distance."
     },
     "country": {
      "type": [
       "string",
       "null"
      ],
      "description": "ISO 3166-1 alpha-2: the nearest place's country within 25 km of it, else the country whose outline holds the point; null in the open sea."
     },
     "countryName": {
      "type": [
       "string",
       "null"
      ]
     },
     "admin1": {
      "type": [
       "string",
       "null"
      ]
     },
     "admin2": {
      "type": [
       "string",
       "null"
      ]
     },
     "city": {
      "type": [
       "string",
       "null"
      ],
      "description": "The large city (100 000 people or more) the point lies in, e.g. Sydney for The Rocks."
     },
     "division": {
      "type": [
       "object",
       "null"
      ],
      "description": "In China: the district whose seat is nearest, with its city and province.",
      "properties": {
       "adcode": {
        "type": "string"
       },
       "province": {
        "type": "string"
       },
       "city": {
        "type": [
         "string",
         "null"
        ]
       },
       "district": {
        "type": [
         "string",
         "null"
        ]
       },
       "distance": {
        "type": "number"
       }
      }
     }
    }
   }
  }
 }
}
"""#
}
