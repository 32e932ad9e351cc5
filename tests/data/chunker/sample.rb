# Sample Ruby file for the chunker tests.
require "json"

MAX_ITEMS = 10

# Utility helpers.
module Util
  # A small stack.
  class Stack < Base
    attr_reader :items

    def initialize(limit)
      @items = []
      @limit = limit
    end

    def push(item)
      raise ArgumentError, "full" if @items.size >= @limit
      @items << item
    end

    def self.build
      new(MAX_ITEMS)
    end

    class Error < StandardError
    end
  end

  def self.double(values)
    values.map { |v| v * 2 }
  end
end

def greet(name)
  puts "Hello, #{name}"
end

greet("world")
