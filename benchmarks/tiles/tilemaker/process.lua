-- The same selection as poi's base tiles (Sources/API/TileRequests.swift, Sources/Records/MapArea.swift):
-- water: natural=water, waterway=riverbank, landuse=reservoir|basin (closed ways and multipolygons);
-- buildings: building=* but "no", from zoom 13; base: named highways but stops, platforms and the like, with names.
-- tilemaker has no sea without a coastline shapefile: the sea poi makes from the coastline has no counterpart here.
node_keys = {}

local not_streets = { bus_stop = true, platform = true, elevator = true, street_lamp = true, traffic_signals = true,
  crossing = true, proposed = true, construction = true, emergency_access_point = true }

function way_function(way)
  local building = way:Find("building")
  local natural = way:Find("natural")
  local landuse = way:Find("landuse")
  local highway = way:Find("highway")
  local name = way:Find("name")
  if way:IsClosed() then
    if building ~= "" and building ~= "no" then
      way:Layer("buildings", true)
      way:Attribute("id", "osm-w" .. way:Id())
      if name ~= "" then way:Attribute("name", name) end
    elseif natural == "water" or way:Find("waterway") == "riverbank" or landuse == "reservoir" or landuse == "basin" then
      way:Layer("water", true)
      way:Attribute("id", "osm-w" .. way:Id())
      if name ~= "" then way:Attribute("name", name) end
    end
  end
  if highway ~= "" and not not_streets[highway] and name ~= "" then
    way:Layer("base", false)
    way:Attribute("id", "osm-w" .. way:Id())
    way:Attribute("name", name)
  end
end
