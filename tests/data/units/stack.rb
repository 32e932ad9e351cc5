require "json"

module Collections
  class BoundedStack
    attr_reader :items

    def initialize(limit)
      @limit = limit
      @items = []
    end

    def push_item(item)
      @items << item if @items.size < @limit
    end

    class Overflow < StandardError
      def message
        "stack is full"
      end
    end
  end
end
