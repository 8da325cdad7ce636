-- Areas and perimeters of regions (issue 29 item 4): stored beside `length`, computed by the server
-- with the domain's regionMeasures when an annotation is written (freehand: shoelace; ellipse: π·a·b
-- and Ramanujan; HPF: πr² and 2πr), from the slide's µm per pixel; null when the slide records none.
-- Existing rows are filled here with the same formulas.
ALTER TABLE annotations
  ADD COLUMN area double precision,
  ADD COLUMN perimeter double precision;

COMMENT ON COLUMN annotations.area IS
  'µm², regions (FREEHAND, ELLIPSE, HPF); null when the slide has no pixel size (domain regionMeasures).';
COMMENT ON COLUMN annotations.perimeter IS
  'µm, regions (FREEHAND, ELLIPSE, HPF); null when the slide has no pixel size (domain regionMeasures).';

UPDATE annotations a
SET area = pi() * a.radius_x * a.radius_y * i.mpp * i.mpp,
    perimeter = pi() * (3 * (a.radius_x + a.radius_y)
                - sqrt((3 * a.radius_x + a.radius_y) * (a.radius_x + 3 * a.radius_y))) * i.mpp
FROM images i
WHERE i.id = a.image_id AND i.mpp > 0 AND i.mpp < 'Infinity'::float8
  AND a.annotation_type = 'ELLIPSE' AND a.radius_x IS NOT NULL AND a.radius_y IS NOT NULL;

UPDATE annotations a
SET area = pi() * (a.radius * i.mpp) ^ 2,
    perimeter = 2 * pi() * a.radius * i.mpp
FROM images i
WHERE i.id = a.image_id AND i.mpp > 0 AND i.mpp < 'Infinity'::float8
  AND a.annotation_type = 'HPF' AND a.radius IS NOT NULL;

-- Freehand polygons: each ring's shoelace sum and outline (the last vertex joined to the first);
-- the outer ring's area less its holes', the outer ring's perimeter.
WITH rings AS (
  SELECT a.id, r.idx, r.ring
  FROM annotations a
  CROSS JOIN LATERAL jsonb_array_elements(a.geometry -> 'coordinates') WITH ORDINALITY AS r (ring, idx)
  WHERE a.annotation_type = 'FREEHAND' AND a.geometry ->> 'type' = 'Polygon'
), vertices AS (
  SELECT rings.id, rings.idx, p.n, (p.pt ->> 0)::float8 AS x, (p.pt ->> 1)::float8 AS y
  FROM rings CROSS JOIN LATERAL jsonb_array_elements(rings.ring) WITH ORDINALITY AS p (pt, n)
), edges AS (
  SELECT id, idx, x, y,
         coalesce(lead(x) OVER w, first_value(x) OVER w) AS nx,
         coalesce(lead(y) OVER w, first_value(y) OVER w) AS ny
  FROM vertices
  WINDOW w AS (PARTITION BY id, idx ORDER BY n)
), ring_sums AS (
  SELECT id, idx, abs(sum(x * ny - nx * y)) / 2 AS area_px, sum(sqrt((nx - x) ^ 2 + (ny - y) ^ 2)) AS perimeter_px,
         count(*) AS vertices
  FROM edges
  GROUP BY id, idx
), measures AS (
  SELECT id,
         sum(CASE WHEN idx = 1 THEN area_px ELSE -area_px END) AS area_px,
         max(CASE WHEN idx = 1 THEN perimeter_px END) AS perimeter_px
  FROM ring_sums
  GROUP BY id
  HAVING max(CASE WHEN idx = 1 THEN vertices END) >= 3
)
UPDATE annotations a
SET area = m.area_px * i.mpp * i.mpp,
    perimeter = m.perimeter_px * i.mpp
FROM measures m, images i
WHERE a.id = m.id AND i.id = a.image_id AND i.mpp > 0 AND i.mpp < 'Infinity'::float8;
