import React, { useState } from "react";

interface ButtonProps {
  label: string;
  onClick: () => void;
}

/** A clickable button. */
export function Button({ label, onClick }: ButtonProps): JSX.Element {
  return <button onClick={onClick}>{label}</button>;
}

export const Counter = () => {
  const [count, setCount] = useState<number>(0);
  const increment = () => setCount(count + 1);
  return <Button label={`Count ${count}`} onClick={increment} />;
};

class Panel extends React.Component<ButtonProps> {
  render() {
    return <div className="panel">{this.props.label}</div>;
  }
}

export default Counter;
