module Geometry

abstract type Shape end

struct Circle <: Shape
    radius::Float64
end

const UNIT_RADIUS = 1.0

function area(c::Circle)
    return pi * c.radius^2
end

perimeter(c::Circle) = 2 * pi * c.radius

macro twice(ex)
    return :($ex; $ex)
end

function describe(s::Shape)
    println("area = ", area(s), " perimeter = ", perimeter(s))
end

end
