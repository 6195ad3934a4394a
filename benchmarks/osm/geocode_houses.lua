-- Geocoding drawn houses of the country-shaped synthetic extract (scripts/osm/synthetic.py --shape country): a
-- street name as the generator makes them (a tree word, a suffix, the street's number) and a house number, seeded.
--   wrk -t1 -c1 -d10s --latency -s benchmarks/osm/geocode_houses.lua http://127.0.0.1:PORT
local words = {"Koivu", "Mänty", "Kuusi", "Vaahtera", "Tammi", "Pihlaja", "Haapa", "Leppä", "Saarni", "Kataja", "Raita", "Jalava"}
local suffixes = {"katu", "tie", "kuja", "polku"}
math.randomseed(42)
local function enc(s) return (s:gsub("[^%w]", function(c) return string.format("%%%02X", string.byte(c)) end)) end
request = function()
  local street = math.random(49, 207000)
  local name = words[(street % 12) + 1] .. suffixes[(math.floor(street / 12) % 4) + 1] .. " " .. street
  local q = name .. " " .. math.random(1, 22)
  return wrk.format("GET", "/v1/geocode?q=" .. enc(q) .. "&limit=1")
end
