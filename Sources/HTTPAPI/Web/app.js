// The map page (docs/ARCHITECTURE.md, "The HTTP contract"): search with autocomplete, results and markers, nearby on click, clusters when
// zoomed out, pins, a WGS-84/GCJ-02 switch, and the view's state in the URL. Plain DOM, no framework; text from
// the API is only ever set with textContent.
"use strict";
(function () {
  const config = window.POI_CONFIG || {};
  const $ = (id) => document.getElementById(id);
  const status = $("status");

  if (!window.L) {
    status.textContent = "Leaflet did not load (/static/leaflet/leaflet.js): install Debian's libjs-leaflet on the server.";
    status.className = "error";
    return;
  }

  // ---- state, read from and written to the URL ---------------------------------------------------------------
  const params = new URLSearchParams(location.search);
  const number = (text, low, high) => {
    if (text === null || text.trim() === "") return null;
    const value = Number(text);
    return Number.isFinite(value) && value >= low && value <= high ? value : null;
  };
  const state = {
    q: (params.get("q") || "").slice(0, 200),
    coordsys: params.get("coordsys") === "gcj02" ? "gcj02" : "wgs84",
    tab: params.get("tab") === "pins" ? "pins" : "places",
    near: null, // {lat, lon} when the list shows what is nearest to a clicked point
    page: null, // how to ask for the next page of the current list
  };
  const nearParts = (params.get("near") || "").split(",");
  if (nearParts.length === 2) {
    const lat = number(nearParts[0], -90, 90);
    const lon = number(nearParts[1], -180, 180);
    if (lat !== null && lon !== null) state.near = { lat, lon };
  }
  const startLat = number(params.get("lat"), -90, 90);
  const startLon = number(params.get("lon"), -180, 180);
  const startZoom = number(params.get("z"), 0, 19);

  function writeURL() {
    const next = new URLSearchParams();
    if (state.q) next.set("q", state.q);
    const center = map.getCenter().wrap();
    next.set("lat", center.lat.toFixed(5));
    next.set("lon", center.lng.toFixed(5));
    next.set("z", String(map.getZoom()));
    if (state.near) next.set("near", `${state.near.lat.toFixed(6)},${state.near.lon.toFixed(6)}`);
    if (state.coordsys !== "wgs84") next.set("coordsys", state.coordsys);
    if (state.tab === "pins") next.set("tab", "pins");
    history.replaceState(null, "", `${location.pathname}?${next.toString()}`);
  }

  // ---- the API ---------------------------------------------------------------------------------------------------
  async function api(path, query, init) {
    const url = new URL(path, location.origin);
    for (const [key, value] of Object.entries(query || {})) {
      if (value !== null && value !== undefined && value !== "") url.searchParams.set(key, String(value));
    }
    if (state.coordsys !== "wgs84") url.searchParams.set("coordsys", state.coordsys);
    const response = await fetch(url, Object.assign({ headers: { accept: "application/json" } }, init || {}));
    const body = await response.json().catch(() => null);
    if (!response.ok) throw new Error(body && body.detail ? body.detail : `${response.status} ${response.statusText}`);
    return body;
  }

  function element(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  const distanceText = (meters) => (meters < 1000 ? `${Math.round(meters)} m` : `${(meters / 1000).toFixed(meters < 10000 ? 1 : 0)} km`);

  function say(text, isError) {
    status.textContent = text;
    status.className = isError ? "error" : "";
  }

  // ---- the map -----------------------------------------------------------------------------------------------------
  const map = L.map("map", { worldCopyJump: true, minZoom: 1, maxZoom: 19 });
  map.createPane("base").style.zIndex = 250;
  // The vector base tiles, above the country outlines; clicks go through to the streets' targets below.
  const streetsPane = map.createPane("streets");
  streetsPane.style.zIndex = 260;
  streetsPane.style.pointerEvents = "none";
  map.createPane("results").style.zIndex = 650; // numbered results above clusters and dots
  if (config.tiles) {
    L.tileLayer(config.tiles, { attribution: config.attribution || "", maxZoom: 19 }).addTo(map);
  } else {
    map.attributionControl.addAttribution("Outlines: Natural Earth (public domain)");
    fetch("/static/countries.geojson")
      .then((response) => (response.ok ? response.json() : Promise.reject(new Error(`outlines: ${response.status}`))))
      .then((outlines) => {
        L.geoJSON(outlines, {
          pane: "base",
          interactive: false,
          style: { color: "#8796a5", weight: 0.8, fillColor: "#f3f0e8", fillOpacity: 1 },
        }).addTo(map);
      })
      .catch(() => map.attributionControl.addAttribution("(country outlines unavailable)"));
  }
  map.attributionControl.addAttribution("Data: © OpenStreetMap contributors, GeoNames");

  // ---- offline base map: the imported map as vector tiles (GET /tiles/base/{z}/{x}/{y}.mvt) at every zoom from 11 ----
  // Each tile is decoded here (Mapbox Vector Tile 2.1: protobuf, written by hand: no library is bundled) and drawn on
  // a canvas: land over the import's box, then water (lakes and the sea), buildings, and streets — lines thin at city
  // scale and wider below, their names along them from zoom 16. A tile the server answers 204 (nothing there) or 400
  // (too many lines at that zoom) stays empty.
  function decodeTile(buffer) {
    const bytes = new Uint8Array(buffer);
    let at = 0;
    const varint = () => {
      let value = 0;
      let scale = 1;
      for (;;) {
        const byte = bytes[at++];
        value += (byte & 0x7f) * scale;
        if (byte < 0x80) return value;
        scale *= 128;
      }
    };
    const skip = (wire) => {
      if (wire === 0) varint();
      else if (wire === 1) at += 8;
      else if (wire === 2) at += varint();
      else if (wire === 5) at += 4;
      else throw new Error(`tile: wire type ${wire}`);
    };
    // The fields of the message from `at` to `end`, each handed to `field(number, wire)`, which reads or skips it.
    const message = (end, field) => {
      while (at < end) {
        const key = varint();
        if (!field(Math.floor(key / 8), key & 7)) skip(key & 7);
      }
    };
    const packed = () => {
      const end = varint() + at;
      const out = [];
      while (at < end) out.push(varint());
      return out;
    };
    const text = (length) => new TextDecoder().decode(bytes.subarray(at, (at += length)));
    const layers = [];
    message(bytes.length, (number, wire) => {
      if (number !== 3 || wire !== 2) return false;
      const layer = { name: "", extent: 4096, keys: [], values: [], features: [] };
      message(varint() + at, (field, type) => {
        if (field === 1) layer.name = text(varint());
        else if (field === 5) layer.extent = varint();
        else if (field === 3) layer.keys.push(text(varint()));
        else if (field === 4) {
          let value = null;
          message(varint() + at, (kind, w) => {
            if (kind === 1) value = text(varint());
            else if (kind === 4 || kind === 5) value = varint();
            else if (kind === 7) value = varint() !== 0;
            else return false;
            return true;
          });
          layer.values.push(value);
        } else if (field === 2 && type === 2) {
          const feature = { id: null, type: 0, tags: [], geometry: [] };
          message(varint() + at, (f) => {
            if (f === 1) feature.id = varint();
            else if (f === 2) feature.tags = packed();
            else if (f === 3) feature.type = varint();
            else if (f === 4) feature.geometry = packed();
            else return false;
            return true;
          });
          layer.features.push(feature);
        } else return false;
        return true;
      });
      layers.push(layer);
      return true;
    });
    return layers;
  }

  // A feature's lines in tile units: MoveTo (1) starts one, LineTo (2) extends it, ClosePath (7) closes it.
  function featureLines(geometry) {
    const lines = [];
    let x = 0;
    let y = 0;
    let line = null;
    for (let i = 0; i < geometry.length; ) {
      const command = geometry[i] & 7;
      const count = geometry[i++] >>> 3;
      if (command === 7) {
        if (line && line.length) line.push(line[0]);
        continue;
      }
      for (let k = 0; k < count; k++) {
        const dx = geometry[i++];
        const dy = geometry[i++];
        x += (dx >>> 1) ^ -(dx & 1);
        y += (dy >>> 1) ^ -(dy & 1);
        if (command === 1) lines.push((line = [[x, y]]));
        else if (line) line.push([x, y]);
      }
    }
    return lines;
  }

  const baseTiles = new Map(); // "z/x/y" → { features, named, water, buildings, waterPixels }: what each drawn tile held
  // The imported map's box (TileJSON's bounds, in the datum the map is drawn in): land there, whatever the 1:110 m
  // outlines beneath say; the water layer then draws the sea and the lakes on it.
  const baseBoundsByDatum = new Map();
  function baseBounds(coordsys) {
    if (!baseBoundsByDatum.has(coordsys)) {
      const query = coordsys === "wgs84" ? "" : `?coordsys=${coordsys}`;
      baseBoundsByDatum.set(
        coordsys,
        fetch(`/tiles/base.json${query}`)
          .then((response) => (response.ok ? response.json() : null))
          .then((tilejson) => (tilejson && tilejson.bounds[0] > -180 ? tilejson.bounds : null))
          .catch(() => null),
      );
    }
    return baseBoundsByDatum.get(coordsys);
  }
  const colours = { land: "#f3f0e8", water: "#aad3df", building: "#d9d0c9", buildingEdge: "#c4b6ab" };
  const BaseLayer = L.GridLayer.extend({
    createTile(coords, done) {
      const tile = document.createElement("canvas");
      const size = this.getTileSize();
      const ratio = window.devicePixelRatio || 1;
      tile.width = size.x * ratio;
      tile.height = size.y * ratio;
      const key = `${coords.z}/${coords.x}/${coords.y}`;
      const query = state.coordsys === "wgs84" ? "" : `?coordsys=${state.coordsys}`;
      Promise.all([
        fetch(`/tiles/base/${key}.mvt${query}`).then((response) => (response.status === 200 ? response.arrayBuffer() : null)),
        baseBounds(state.coordsys),
      ])
        .then(([buffer, bounds]) => {
          const layers = buffer ? decodeTile(buffer) : [];
          const drawn = { features: 0, named: 0, water: 0, buildings: 0, waterPixels: 0 };
          const context = tile.getContext("2d");
          context.scale(ratio, ratio);
          const zoom = coords.z;
          if (bounds) {
            const [west, south, east, north] = bounds;
            const topLeft = map.project([north, west], zoom).subtract([coords.x * size.x, coords.y * size.y]);
            const bottomRight = map.project([south, east], zoom).subtract([coords.x * size.x, coords.y * size.y]);
            context.fillStyle = colours.land;
            context.fillRect(topLeft.x, topLeft.y, bottomRight.x - topLeft.x, bottomRight.y - topLeft.y);
          }
          for (const layer of layers) {
            const scale = size.x / layer.extent;
            if (layer.name === "water" || layer.name === "buildings") {
              // Areas: every ring of a feature in one path, filled even-odd (a hole is an inner ring).
              const water = layer.name === "water";
              context.fillStyle = water ? colours.water : colours.building;
              context.strokeStyle = colours.buildingEdge;
              context.lineWidth = 0.6;
              for (const feature of layer.features) {
                drawn[layer.name]++;
                context.beginPath();
                for (const ring of featureLines(feature.geometry)) {
                  ring.forEach(([x, y], i) => (i ? context.lineTo(x * scale, y * scale) : context.moveTo(x * scale, y * scale)));
                  context.closePath();
                }
                context.fill("evenodd");
                if (!water && zoom >= 15) context.stroke();
              }
              continue;
            }
            const nameKey = layer.keys.indexOf("name");
            const labels = [];
            context.strokeStyle = "#a3adb8";
            context.lineCap = "round";
            context.lineJoin = "round";
            context.lineWidth = zoom >= 17 ? 7 : zoom >= 16 ? 5 : zoom >= 15 ? 3 : zoom >= 13 ? 1.5 : 0.8;
            for (const feature of layer.features) {
              drawn.features++;
              const lines = featureLines(feature.geometry);
              context.beginPath();
              for (const line of lines) {
                line.forEach(([x, y], i) => (i ? context.lineTo(x * scale, y * scale) : context.moveTo(x * scale, y * scale)));
              }
              context.stroke();
              let name = null;
              for (let i = 0; i + 1 < feature.tags.length; i += 2) if (feature.tags[i] === nameKey) name = layer.values[feature.tags[i + 1]];
              if (name) {
                drawn.named++;
                labels.push({ name: String(name), lines });
              }
            }
            // Names along their street from zoom 16: at the middle of the line's longest segment inside the tile.
            if (zoom >= 16) {
              context.font = `${zoom >= 17 ? 12 : 11}px sans-serif`;
              context.textAlign = "center";
              context.textBaseline = "middle";
              const placed = new Set();
              for (const label of labels) {
                if (placed.has(label.name)) continue;
                let best = null;
                for (const line of label.lines) {
                  for (let i = 0; i + 1 < line.length; i++) {
                    const [x0, y0] = line[i].map((v) => v * scale);
                    const [x1, y1] = line[i + 1].map((v) => v * scale);
                    const length = Math.hypot(x1 - x0, y1 - y0);
                    const inside = (x0 + x1) / 2 > 0 && (x0 + x1) / 2 < size.x && (y0 + y1) / 2 > 0 && (y0 + y1) / 2 < size.y;
                    if (inside && (!best || length > best.length)) best = { x0, y0, x1, y1, length };
                  }
                }
                const width = context.measureText(label.name).width;
                if (!best || best.length < width) continue;
                // Whole inside the tile, or it would be cut at the tile's edge.
                const [cx, cy] = [(best.x0 + best.x1) / 2, (best.y0 + best.y1) / 2];
                const [hx, hy] = [((best.x1 - best.x0) / best.length) * (width / 2 + 2), ((best.y1 - best.y0) / best.length) * (width / 2 + 2)];
                const within = (x, y) => x > 6 && x < size.x - 6 && y > 6 && y < size.y - 6;
                if (!within(cx - hx, cy - hy) || !within(cx + hx, cy + hy)) continue;
                placed.add(label.name);
                let angle = Math.atan2(best.y1 - best.y0, best.x1 - best.x0);
                if (angle > Math.PI / 2) angle -= Math.PI;
                if (angle < -Math.PI / 2) angle += Math.PI;
                context.save();
                context.translate((best.x0 + best.x1) / 2, (best.y0 + best.y1) / 2);
                context.rotate(angle);
                context.lineWidth = 3;
                context.strokeStyle = "rgba(255,255,255,0.9)";
                context.strokeText(label.name, 0, 0);
                context.fillStyle = "#3d4752";
                context.fillText(label.name, 0, 0);
                context.restore();
              }
            }
          }
          // The share of the tile drawn as water, for the browser test.
          const pixels = context.getImageData(0, 0, tile.width, tile.height).data;
          for (let i = 0; i < pixels.length; i += 4) {
            if (Math.abs(pixels[i] - 0xaa) < 4 && Math.abs(pixels[i + 1] - 0xd3) < 4 && Math.abs(pixels[i + 2] - 0xdf) < 4) drawn.waterPixels++;
          }
          baseTiles.set(key, drawn);
          done(null, tile);
        })
        .catch((error) => done(error, tile));
      return tile;
    },
  });
  // From zoom 11: below it a tile's streets are more than the server draws in one tile.
  const baseLayer = new BaseLayer({ pane: "streets", minZoom: 11, maxZoom: 19, keepBuffer: 1 });
  // Whether every tile in view is drawn, and at which zoom (for the browser test's screenshots).
  baseLayer.on("loading", () => (window.poi.baseLoaded = null));
  baseLayer.on("load", () => (window.poi.baseLoaded = map.getZoom()));
  if (!config.tiles) baseLayer.addTo(map);

  // ---- below city scale, the streets as GeoJSON too (GET /v1/streets), invisible: what a click on a street hits ----
  const streetsLayer = L.layerGroup().addTo(map);
  let streetsSequence = 0;
  async function refreshStreets() {
    const sequence = ++streetsSequence;
    if (config.tiles || map.getZoom() < 14) {
      streetsLayer.clearLayers();
      return;
    }
    const b = map.getBounds().pad(0.2);
    const bbox = [b.getWest(), b.getSouth(), b.getEast(), b.getNorth()].map((v) => v.toFixed(6)).join(",");
    try {
      const body = await api("/v1/streets", { bbox, limit: 3000, coordsys: state.coordsys });
      if (sequence !== streetsSequence) return;
      streetsLayer.clearLayers();
      streetsLayer.bbox = bbox; // what was drawn, for the browser test
      streetsLayer.ids = body.features.map((feature) => feature.id);
      L.geoJSON(body, {
        pane: "base",
        // Drawn by the tiles; here only a wide, transparent target for clicks.
        style: () => ({ color: "#000", weight: map.getZoom() >= 16 ? 9 : 7, opacity: 0, lineCap: "round" }),
        onEachFeature: (feature, layer) => {
          layer.on("click", (event) => {
            L.DomEvent.stopPropagation(event);
            showAddress(event.latlng.wrap(), feature.properties.name);
          });
        },
      }).addTo(streetsLayer);
    } catch (error) {
      // the base layer is an aid: the page works without it
    }
  }

  // The address at a point (GET /v1/reverse): the house within 60 m, else the street, in a popup.
  async function showAddress(point, streetName) {
    try {
      const body = await api("/v1/reverse", { lat: point.lat.toFixed(7), lon: point.lng.toFixed(7), coordsys: state.coordsys });
      const box = element("div", "popup address-popup");
      const found = body.address;
      box.appendChild(element("strong", "", found ? found.displayName.split(", ").slice(0, 2).join(", ") : streetName || "no address here"));
      if (found) box.appendChild(element("div", "", `${found.type === "house" ? "house" : "street"}, ${distanceText(found.distance)} away`));
      if (body.place) box.appendChild(element("div", "", body.place.displayName));
      L.popup().setLatLng(point).setContent(box).openOn(map);
      window.poi.lastAddress = { lat: point.lat.toFixed(7), lon: point.lng.toFixed(7), shown: box.firstChild.textContent };
    } catch (error) {
      say(error.message, true);
    }
  }
  const overviewLayer = L.layerGroup().addTo(map);
  const resultsLayer = L.featureGroup().addTo(map);
  const pinsLayer = L.featureGroup().addTo(map);
  const nearLayer = L.layerGroup().addTo(map);
  const markersById = new Map();

  function tagElement(layer, id) {
    const node = layer.getElement && layer.getElement();
    if (node) node.setAttribute("data-poi-id", id);
  }

  function popupFor(record) {
    const box = element("div", "popup");
    box.appendChild(element("strong", "", record.name || [record.firstName, record.lastName].filter(Boolean).join(" ") || record.id));
    const lines = [
      record.category,
      [record.address, record.city].filter(Boolean).join(", "),
      record.mapString,
      record.distance !== undefined ? `${distanceText(record.distance)} away` : null,
      `${record.lat.toFixed(6)}, ${record.lon.toFixed(6)} (${state.coordsys === "gcj02" ? "GCJ-02" : "WGS-84"})`,
    ];
    for (const line of lines) if (line) box.appendChild(element("div", "", line));
    const link = (record.tags && record.tags.website) || record.mediaURL;
    if (link && /^https?:\/\//i.test(link)) {
      const anchor = element("a", "", link.replace(/^https?:\/\//i, "").slice(0, 60));
      anchor.href = link;
      anchor.target = "_blank";
      anchor.rel = "noopener noreferrer";
      box.appendChild(anchor);
    }
    return box;
  }

  // ---- overview: clusters when zoomed out, the records in view when zoomed in --------------------------------------
  // Geohash cell widths in degrees of longitude, by precision 1..7; a cell about a sixth of the view wide.
  const cellWidths = [45, 11.25, 1.40625, 0.3515625, 0.0439453125, 0.010986328125, 0.001373291015625];
  let overviewSequence = 0;

  function viewBox() {
    const bounds = map.getBounds();
    let west = bounds.getWest();
    let east = bounds.getEast();
    if (east - west >= 360) {
      west = -180;
      east = 180;
    } else {
      const shift = Math.floor((west + 180) / 360) * 360;
      west -= shift;
      east -= shift;
      if (east > 180) east = 180; // the part across the antimeridian is left out of the overview
    }
    const south = Math.max(-90, bounds.getSouth());
    const north = Math.min(90, bounds.getNorth());
    return [west, south, east, north].map((value) => value.toFixed(6)).join(",");
  }

  async function refreshOverview() {
    const sequence = ++overviewSequence;
    const zoom = map.getZoom();
    try {
      if (zoom >= 16) {
        const body = await api("/v1/within", { bbox: viewBox(), limit: 100, q: state.q });
        if (sequence !== overviewSequence) return;
        overviewLayer.clearLayers();
        for (const record of body.results) {
          if (markersById.has(record.id)) continue;
          const dot = L.circleMarker([record.lat, record.lon], { radius: 4, color: "#5b6877", weight: 1, fillColor: "#ffffff", fillOpacity: 1 });
          dot.bindTooltip(record.name || record.id).bindPopup(() => popupFor(record)).addTo(overviewLayer);
          tagElement(dot, record.id);
        }
        return;
      }
      const width = map.getBounds().getEast() - map.getBounds().getWest();
      const target = Math.min(360, width) / 6;
      let precision = cellWidths.findIndex((cell) => cell <= target) + 1;
      if (precision === 0) precision = 7;
      const body = await api("/v1/clusters", { bbox: viewBox(), precision, q: state.q });
      if (sequence !== overviewSequence) return;
      overviewLayer.clearLayers();
      for (const cluster of body.results) {
        const size = Math.round(18 + 7 * Math.log10(cluster.count));
        const icon = L.divIcon({
          className: "cluster",
          html: "",
          iconSize: [size, size],
        });
        const marker = L.marker([cluster.lat, cluster.lon], { icon, keyboard: false, title: `${cluster.count} records` }).addTo(overviewLayer);
        const node = marker.getElement();
        if (node) {
          node.textContent = cluster.count > 9999 ? `${Math.round(cluster.count / 1000)}k` : String(cluster.count);
          node.style.lineHeight = `${size - 4}px`;
          node.setAttribute("data-geohash", cluster.geohash);
        }
        marker.on("click", () => map.setView([cluster.lat, cluster.lon], Math.min(map.getZoom() + 3, 18)));
      }
    } catch (error) {
      if (sequence === overviewSequence) overviewLayer.clearLayers();
    }
  }

  // ---- the results list --------------------------------------------------------------------------------------------
  const resultsList = $("results");
  const moreButton = $("more");

  function showResults(records, append) {
    if (!append) {
      resultsList.replaceChildren();
      resultsLayer.clearLayers();
      markersById.clear();
    }
    for (const record of records) {
      const item = element("li", "result");
      item.setAttribute("data-poi-id", record.id);
      item.appendChild(element("div", "name", record.name || record.id));
      const meta = [record.category, [record.address, record.city].filter(Boolean).join(", ")];
      if (record.distance !== undefined) meta.push(distanceText(record.distance));
      item.appendChild(element("div", "meta", meta.filter(Boolean).join(" · ")));
      const number = resultsList.children.length + 1;
      const icon = L.divIcon({ className: "result-marker", html: "", iconSize: [24, 24] });
      const marker = L.marker([record.lat, record.lon], { icon, pane: "results", title: record.name || record.id });
      marker.bindPopup(() => popupFor(record)).addTo(resultsLayer);
      const node = marker.getElement();
      if (node) node.textContent = String(number);
      tagElement(marker, record.id);
      markersById.set(record.id, marker);
      const select = () => {
        for (const other of resultsList.querySelectorAll(".active")) other.classList.remove("active");
        item.classList.add("active");
        map.setView([record.lat, record.lon], Math.max(map.getZoom(), 16));
        marker.openPopup();
      };
      item.addEventListener("click", select);
      marker.on("click", () => {
        for (const other of resultsList.querySelectorAll(".active")) other.classList.remove("active");
        item.classList.add("active");
        item.scrollIntoView({ block: "nearest" });
      });
      resultsList.appendChild(item);
    }
  }

  function fitResults() {
    if (resultsLayer.getLayers().length === 0) return;
    map.fitBounds(resultsLayer.getBounds(), { maxZoom: 16, padding: [40, 40] });
  }

  /// The origin favoured by a search: the view's centre, once the view is a region rather than the world.
  function searchOrigin() {
    if (map.getZoom() < 6) return {};
    const center = map.getCenter().wrap();
    return { lat: center.lat.toFixed(6), lon: center.lng.toFixed(6) };
  }

  async function search(options) {
    state.near = null;
    nearLayer.clearLayers();
    const offset = options.offset || 0;
    if (!state.q) {
      showResults([], false);
      moreButton.hidden = true;
      say("Type a name, a word such as kahvila or museum, or click the map.");
      writeURL();
      return;
    }
    say(`Searching for “${state.q}”…`);
    try {
      const origin = options.origin || searchOrigin();
      const body = await api("/v1/search", Object.assign({ q: state.q, limit: 20, offset }, origin));
      showResults(body.results, offset > 0);
      const shown = resultsList.children.length;
      say(body.total === 0 ? `Nothing matches “${state.q}”.` : `${body.total} match${body.total === 1 ? "" : "es"} for “${state.q}”, showing ${shown}.`);
      state.page = body.next ? () => search({ offset: Number(body.next), origin }) : null;
      moreButton.hidden = !state.page;
      if (options.fit) fitResults();
    } catch (error) {
      say(error.message, true);
    }
    writeURL();
    refreshOverview();
  }

  async function nearby(point, cursor) {
    state.near = point;
    nearLayer.clearLayers();
    L.circleMarker([point.lat, point.lon], { radius: 6, color: "#c53030", weight: 3, fill: false, interactive: false }).addTo(nearLayer);
    say(`Nearest${state.q ? ` “${state.q}”` : ""} to ${point.lat.toFixed(5)}, ${point.lon.toFixed(5)}…`);
    try {
      const body = await api("/v1/nearby", { lat: point.lat.toFixed(6), lon: point.lon.toFixed(6), limit: 20, q: state.q, cursor });
      showResults(body.results, Boolean(cursor));
      const shown = resultsList.children.length;
      say(shown === 0
        ? `Nothing${state.q ? ` matching “${state.q}”` : ""} near ${point.lat.toFixed(5)}, ${point.lon.toFixed(5)}.`
        : `${shown} nearest${state.q ? ` “${state.q}”` : ""} to ${point.lat.toFixed(5)}, ${point.lon.toFixed(5)}.`);
      state.page = body.next ? () => nearby(point, body.next) : null;
      moreButton.hidden = !state.page;
    } catch (error) {
      say(error.message, true);
    }
    writeURL();
  }

  moreButton.addEventListener("click", () => state.page && state.page());
  map.on("click", (event) => {
    const point = event.latlng.wrap();
    nearby({ lat: point.lat, lon: point.lng });
    // Close to the ground, a click also says the address there.
    if (map.getZoom() >= 16) showAddress(point);
  });

  // ---- search box with suggestions as typed (GET /v1/suggest: POIs, also by pinyin; houses and streets; places) -
  const input = $("q");
  const suggestions = $("suggestions");
  let suggestSequence = 0;
  let suggestTimer = null;
  let highlighted = -1;

  function hideSuggestions() {
    suggestions.hidden = true;
    suggestions.replaceChildren();
    highlighted = -1;
  }

  function choose(record) {
    hideSuggestions();
    input.value = record.name;
    state.q = record.name;
    showResults([record], false);
    say(`“${record.name}”`);
    state.page = null;
    moreButton.hidden = true;
    map.setView([record.lat, record.lon], Math.max(map.getZoom(), 16));
    markersById.get(record.id).openPopup();
    writeURL();
  }

  /// A house, street or place suggested: the map goes there, with a popup naming it.
  function chooseAddress(item) {
    hideSuggestions();
    input.value = item.name;
    map.setView([item.lat, item.lon], item.kind === "address" ? 18 : 12);
    L.popup().setLatLng([item.lat, item.lon]).setContent(escapeText(item.displayName || item.name)).openOn(map);
    say(`“${item.name}”`);
  }

  function escapeText(text) {
    const div = document.createElement("div");
    div.textContent = text;
    return div.innerHTML;
  }

  async function suggest() {
    const text = input.value.trim();
    const sequence = ++suggestSequence;
    // One letter is enough for Han ("肯"); Latin waits for two.
    if (text.length < 2 && !/[\u3400-\u9fff]/.test(text)) return hideSuggestions();
    try {
      const body = await api("/v1/suggest", Object.assign({ q: text, limit: 8 }, searchOrigin()));
      if (sequence !== suggestSequence || input.value.trim() !== text) return;
      suggestions.replaceChildren();
      highlighted = -1;
      for (const item of body.results) {
        const option = element("li");
        option.setAttribute("role", "option");
        option.setAttribute("data-kind", item.kind);
        if (item.kind === "poi") option.setAttribute("data-poi-id", item.id);
        option.appendChild(element("div", "", item.name || item.id));
        const meta = item.kind === "poi" ? [item.category, item.city] : [item.type, item.displayName];
        option.appendChild(element("div", "meta", meta.filter(Boolean).join(" · ")));
        const pick = () => (item.kind === "poi" ? choose(item) : chooseAddress(item));
        option.addEventListener("mousedown", (event) => {
          event.preventDefault();
          pick();
        });
        option.pick = pick;
        suggestions.appendChild(option);
      }
      suggestions.hidden = body.results.length === 0;
    } catch (error) {
      hideSuggestions();
    }
  }

  input.addEventListener("input", () => {
    clearTimeout(suggestTimer);
    suggestTimer = setTimeout(suggest, 120);
  });
  input.addEventListener("keydown", (event) => {
    const options = suggestions.children;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      if (options.length === 0) return;
      event.preventDefault();
      highlighted = (highlighted + (event.key === "ArrowDown" ? 1 : options.length - 1)) % options.length;
      for (let i = 0; i < options.length; i++) options[i].setAttribute("aria-selected", String(i === highlighted));
    } else if (event.key === "Enter" && highlighted >= 0 && options[highlighted]) {
      event.preventDefault();
      options[highlighted].pick();
    } else if (event.key === "Escape") {
      hideSuggestions();
    }
  });
  input.addEventListener("blur", () => setTimeout(hideSuggestions, 150));
  $("search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    clearTimeout(suggestTimer);
    suggestSequence++;
    hideSuggestions();
    state.q = input.value.trim().slice(0, 200);
    search({ fit: true });
  });

  // ---- coordinate system -------------------------------------------------------------------------------------------
  const coordsysSelect = $("coordsys");
  coordsysSelect.value = state.coordsys;
  coordsysSelect.addEventListener("change", () => {
    state.coordsys = coordsysSelect.value === "gcj02" ? "gcj02" : "wgs84";
    // Answers now come in the chosen datum (GCJ-02 matches AMap's tiles); ask again, the base map's tiles too.
    baseTiles.clear();
    baseLayer.redraw();
    refreshStreets();
    if (state.near) nearby(state.near);
    else search({});
    if (state.tab === "pins") loadPins();
  });

  // ---- pins: the On the Map screen -----------------------------------------------------------------------------
  const pinStatus = $("pin-status");
  const pinsList = $("pins");

  async function loadPins() {
    try {
      const body = await api("/v1/pins", { limit: 100, order: "-updatedAt" });
      pinsList.replaceChildren();
      pinsLayer.clearLayers();
      for (const pin of body.results) {
        const name = [pin.firstName, pin.lastName].filter(Boolean).join(" ") || "(no name)";
        const item = element("li", "pin");
        item.setAttribute("data-poi-id", pin.id);
        item.appendChild(element("div", "name", name));
        item.appendChild(element("div", "meta", [pin.mapString, pin.mediaURL].filter(Boolean).join(" · ")));
        const marker = L.circleMarker([pin.lat, pin.lon], { radius: 7, color: "#ffffff", weight: 2, fillColor: "#dd6b20", fillOpacity: 0.95 });
        marker.bindTooltip(name).bindPopup(() => popupFor(pin)).addTo(pinsLayer);
        tagElement(marker, pin.id);
        item.addEventListener("click", () => {
          map.setView([pin.lat, pin.lon], Math.max(map.getZoom(), 14));
          marker.openPopup();
        });
        pinsList.appendChild(item);
      }
      if (body.results.length === 0) pinStatus.textContent = "No pins yet: add the first one.";
    } catch (error) {
      pinStatus.textContent = error.message;
      pinStatus.className = "error";
    }
  }

  $("pin-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = event.target;
    const fields = Object.fromEntries(new FormData(form).entries());
    pinStatus.className = "";
    pinStatus.textContent = `Looking up “${fields.mapString}”…`;
    try {
      const found = await api("/v1/geocode", { q: fields.mapString, limit: 1 });
      if (found.results.length === 0) throw new Error(`no place found for “${fields.mapString}”`);
      const place = found.results[0];
      const headers = { accept: "application/json", "content-type": "application/json" };
      if (fields.apiKey) headers.authorization = `Bearer ${fields.apiKey}`;
      const pin = await api("/v1/pins", {}, {
        method: "POST",
        headers,
        body: JSON.stringify({
          firstName: fields.firstName || "", lastName: fields.lastName || "", mapString: fields.mapString,
          mediaURL: fields.mediaURL || "", lat: place.lat, lon: place.lon,
        }),
      });
      pinStatus.textContent = `Added at ${place.displayName || place.name}.`;
      form.reset();
      await loadPins();
      map.setView([pin.lat, pin.lon], Math.max(map.getZoom(), 12));
    } catch (error) {
      pinStatus.textContent = error.message;
      pinStatus.className = "error";
    }
  });

  // ---- tabs --------------------------------------------------------------------------------------------------------
  function showTab(tab) {
    state.tab = tab;
    $("tab-places").setAttribute("aria-selected", String(tab === "places"));
    $("tab-pins").setAttribute("aria-selected", String(tab === "pins"));
    $("places-panel").hidden = tab !== "places";
    $("pins-panel").hidden = tab !== "pins";
    if (tab === "pins") loadPins();
    else pinsLayer.clearLayers();
    writeURL();
  }
  $("tab-places").addEventListener("click", () => showTab("places"));
  $("tab-pins").addEventListener("click", () => showTab("pins"));

  // ---- start -------------------------------------------------------------------------------------------------------
  map.on("moveend", () => {
    writeURL();
    refreshOverview();
    refreshStreets();
  });
  input.value = state.q;

  async function start() {
    if (startLat !== null && startLon !== null) {
      map.setView([startLat, startLon], startZoom === null ? 13 : startZoom);
    } else {
      // No view in the URL: open where the data is, on the world's largest cluster.
      map.setView([20, 0], 2);
      try {
        const body = await api("/v1/clusters", { bbox: "-180,-90,180,90", precision: 2 });
        const largest = body.results.reduce((best, cluster) => (!best || cluster.count > best.count ? cluster : best), null);
        if (largest && !state.q && !state.near) map.setView([largest.lat, largest.lon], 13);
      } catch (error) {
        // the world view stays
      }
    }
    if (state.tab === "pins") showTab("pins");
    if (state.near) await nearby(state.near);
    else await search({ fit: startLat === null || startLon === null, origin: startLat === null ? {} : undefined });
    document.body.setAttribute("data-ready", "true");
  }
  // For the browser test and the curious: the map, the page's state and the results' markers.
  window.poi = { map, state, resultsLayer, pinsLayer, streetsLayer, baseTiles, decodeTile };
  start();
})();
