require "json"

module Billing
  RATE = 0.2

  class Invoice < Base
    def initialize(items)
      @items = items
    end

    def total
      @items.sum { |i| i.price } * (1 + RATE)
    end

    def self.load(path)
      new(JSON.parse(File.read(path)))
    end
  end
end

def format_total(invoice)
  invoice.total.round(2)
end
